package codemode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scrollback-dev/scrollback/codemode/internal/procmem"
	"github.com/scrollback-dev/scrollback/codemode/internal/sandbox"
	"github.com/scrollback-dev/scrollback/internal/procgroup"
	"github.com/scrollback-dev/scrollback/present"
)

// ErrWorker: the script's worker process ended before the script did, for
// a reason other than the run's limits (killed from outside, crashed), or
// no worker could be started.
var ErrWorker = errors.New("codemode: worker process failed")

// Layer is one protection of a worker process and whether it holds on
// this machine (Pool.Layers).
type Layer = sandbox.Layer

// PoolOptions configures a Pool.
type PoolOptions struct {
	// Size is how many workers are kept started and ready, so that a run
	// does not wait for a process to start: each run takes one and a
	// replacement is started. 0 keeps none: each run starts its own.
	Size int
	// Command returns the command that starts a worker. nil runs this
	// executable with WorkerArg (its main must call WorkerMain). The
	// command's standard input and output are the protocol's, its
	// standard error is kept for the error of a worker that dies.
	Command func() (*exec.Cmd, error)
	// Logger gets, once, the sandbox layers the workers lack on this
	// machine (and the others at debug level), and why a worker could not
	// start. nil logs nothing.
	Logger *slog.Logger
	// OnExit, when set, is called after each worker process has ended.
	OnExit func(WorkerExit)
	// Light has the script workers skip their warm-up (a TypeScript
	// script run through esbuild and goja), so that one starts sooner:
	// for a single script where the start counts more than the first
	// transform's cost. Query's workers (QuerySize) are always light.
	Light bool
	// QuerySize is how many light workers (see Light) are kept started
	// and ready for Query's jq filters, apart from Size's for scripts,
	// so that a burst of filters never takes the workers a script waits
	// for, nor the reverse. 0 keeps none: each filter starts its own.
	QuerySize int
}

// WorkerExit is what is known of a worker process once it has ended.
type WorkerExit struct {
	PID int
	// PeakRSS is the process's peak resident memory in bytes: the most
	// the server saw (Linux: its VmHWM, read while it ran, and every
	// reading of its resident memory), else the operating system's
	// count at its exit (0 where there is none).
	PeakRSS int64
	// Cause is why it ended: "done" (its script finished), "memory",
	// "timeout", "canceled", "died" (it ended by itself before its
	// script did), "closed" (the pool closed) or "start" (it never said
	// it was ready).
	Cause string
}

// Pool runs scripts in worker processes, one process per script: each
// run takes a worker that has started, warmed up and dropped what it does
// not need (see package doc), sends it the script, answers its tool calls
// (applying the bridge rule: results over the budget are retained before
// the worker sees them), and ends the process when the script is done.
// The server watches the worker's resident memory and time and kills it
// past its bounds; the worker holds its own limits too. A nil *Pool runs
// scripts in this process (Run).
//
// A Pool is safe for concurrent use: each concurrent run has a worker of
// its own.
type Pool struct {
	opts  PoolOptions
	ready chan *worker
	// queries runs Query's filters: light workers of their own
	// (PoolOptions.QuerySize), nil in a pool of them, whose parent is
	// the pool they serve.
	queries, parent *Pool

	mu       sync.Mutex
	closed   bool
	starting int       // warm workers being started
	waiting  int       // runs waiting for one of them
	failed   time.Time // when a warm start last failed
	layers   []Layer
	bg       sync.WaitGroup
	logOnce  sync.Once

	// How get found its workers, for tests: ready ones taken at once,
	// waits for one being started, starts of its own.
	took, waited, cold atomic.Int64
}

// NewPool returns a Pool and starts its warm workers: Size for scripts,
// QuerySize light ones for filters.
func NewPool(opts PoolOptions) *Pool {
	p := newPool(opts, nil)
	qopts := opts
	qopts.Size, qopts.QuerySize, qopts.Light = opts.QuerySize, 0, true
	p.queries = newPool(qopts, p)
	p.refill()
	p.queries.refill()
	return p
}

func newPool(opts PoolOptions, parent *Pool) *Pool {
	return &Pool{opts: opts, ready: make(chan *worker, max(opts.Size, 1)), parent: parent}
}

// root is the pool that was made by NewPool: p, or the pool whose query
// workers p starts. Its workers' sandbox layers are the pool's.
func (p *Pool) root() *Pool {
	if p.parent != nil {
		return p.parent
	}
	return p
}

// Time limits of the pool's own.
const (
	// killGrace is how long past a run's timeout the pool waits for the
	// worker to stop the script itself (with its line and column) before
	// it kills the process.
	killGrace = time.Second
	// startTimeout is how long a worker may take to say it is ready.
	startTimeout = 60 * time.Second
	// watchEvery is how often the server reads a worker's memory.
	watchEvery = 2 * time.Millisecond
	// failBackoff is how long after a failed warm start none is tried.
	failBackoff = time.Second
)

// Layers returns the sandbox layers of the pool's workers, as the first
// worker to start reported them (nil before one has started).
func (p *Pool) Layers() []Layer {
	if p == nil {
		return nil
	}
	p = p.root()
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.layers
}

// Close ends the pool's idle workers (its query workers' too) and stops
// starting new ones. Runs and queries under way go on to their end. It
// waits for the processes to end.
func (p *Pool) Close() error {
	if p == nil {
		return nil
	}
	if p.queries != nil {
		defer p.queries.Close()
	}
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	for drained := false; !drained; {
		select {
		case w := <-p.ready:
			w.end("closed")
		default:
			drained = true
		}
	}
	p.bg.Wait()
	return nil
}

// goBg runs f in the background, counted in bg, unless the pool is
// closed.
func (p *Pool) goBg(f func()) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.bg.Add(1)
	go func() {
		defer p.bg.Done()
		f()
	}()
	return true
}

// Run runs code as Run does, in a worker process (see Pool). A nil Pool
// runs it in this process. Besides Run's errors, the Error's kind is
// "worker" (ErrWorker) when the worker process died of something else
// than the run's limits, or could not be started.
func (p *Pool) Run(ctx context.Context, code string, tools []Tool, opts Options) Result {
	if p == nil {
		return Run(ctx, code, tools, opts)
	}
	opts = opts.withDefaults()
	res := Result{Retained: []Ref{}, Complete: true}
	w, err := p.get(ctx)
	if err != nil {
		res.Error = &Error{Kind: "worker", Err: ErrWorker, Message: "no Code Mode worker process could be started: " + err.Error()}
		if ctx.Err() != nil {
			res.Error = &Error{Kind: "canceled", Err: ErrCanceled, Message: "the run was canceled by its caller while it waited for a worker process"}
		}
		return res
	}
	w.mu.Lock()
	w.running = true
	w.mu.Unlock()
	cause := p.session(ctx, w, code, tools, opts, &res)
	w.end(cause)
	w.closeFiles()
	// The replacement starts once the script is done, not beside it: its
	// start (a process, and esbuild's and goja's warm-up) would take CPU
	// from the script.
	p.refill()
	return res
}

// get takes a ready worker, waits for one being started, or starts one.
func (p *Pool) get(ctx context.Context) (*worker, error) {
	for {
		select {
		case w := <-p.ready:
			if w.gone() {
				continue // it died while it waited
			}
			p.took.Add(1)
			return w, nil
		default:
		}
		p.mu.Lock()
		wait := p.starting > p.waiting
		if wait {
			p.waiting++
		}
		p.mu.Unlock()
		if !wait {
			break
		}
		select {
		case w := <-p.ready:
			p.mu.Lock()
			p.waiting--
			p.mu.Unlock()
			if w.gone() {
				continue
			}
			p.waited.Add(1)
			return w, nil
		case <-ctx.Done():
			p.mu.Lock()
			p.waiting--
			p.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	type started struct {
		w   *worker
		err error
	}
	ch := make(chan started, 1)
	p.cold.Add(1)
	if !p.goBg(func() {
		w, err := p.start()
		ch <- started{w, err}
	}) {
		return nil, errors.New("the pool is closed")
	}
	select {
	case s := <-ch:
		return s.w, s.err
	case <-ctx.Done():
		go func() {
			if s := <-ch; s.w != nil {
				s.w.end("canceled")
			}
		}()
		return nil, ctx.Err()
	}
}

// refill starts warm workers until Size are ready or starting.
func (p *Pool) refill() {
	p.mu.Lock()
	need := 0
	if !p.closed && time.Since(p.failed) > failBackoff {
		need = p.opts.Size - len(p.ready) - p.starting
	}
	p.starting += max(need, 0)
	p.mu.Unlock()
	for i := 0; i < need; i++ {
		started := p.goBg(func() {
			w, err := p.start()
			p.mu.Lock()
			p.starting--
			closed := p.closed
			if err != nil {
				p.failed = time.Now()
			}
			p.mu.Unlock()
			switch {
			case err != nil:
				p.logf(slog.LevelWarn, "code mode: a worker process could not start", "error", err)
			case closed:
				w.end("closed")
			default:
				select {
				case p.ready <- w:
				default:
					w.end("closed")
				}
			}
		})
		if !started {
			p.mu.Lock()
			p.starting--
			p.mu.Unlock()
		}
	}
}

func (p *Pool) logf(level slog.Level, msg string, args ...any) {
	if p.opts.Logger != nil {
		p.opts.Logger.Log(context.Background(), level, msg, args...)
	}
}

// worker is one worker process.
type worker struct {
	p      *Pool
	cmd    *exec.Cmd
	group  procgroup.Group
	pid    int
	in     *bufio.Writer
	out    *bufio.Reader
	files  []*os.File // the pool's ends of the pipes
	stderr *headBuffer

	peak atomic.Int64 // the most resident memory seen, or its peak as the OS tells it

	closeOnce sync.Once // closes files

	mu      sync.Mutex
	running bool          // a run has it: the run closes files, not wait
	exited  bool          // the process has exited (it may not be reaped yet)
	cause   string        // why the pool ended it
	reaped  chan struct{} // closed once it is reaped and its stderr read
	state   *os.ProcessState
	started time.Time
}

// start starts a worker and waits until it says it is ready.
func (p *Pool) start() (*worker, error) {
	var cmd *exec.Cmd
	var err error
	if p.opts.Command != nil {
		cmd, err = p.opts.Command()
	} else {
		cmd, err = selfCommand()
	}
	if err != nil {
		return nil, err
	}
	cmd.Env = append(cmd.Environ(), workerEnv+"="+protocolVersion)
	if p.opts.Light {
		cmd.Env = append(cmd.Env, workerLightEnv+"=1")
	}
	killWithParent(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	group, err := procgroup.Start(cmd)
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	w := &worker{p: p, cmd: cmd, group: group, pid: cmd.Process.Pid,
		in: bufio.NewWriterSize(inW, 64<<10), out: bufio.NewReaderSize(outR, 64<<10),
		files: []*os.File{inW, outR}, stderr: &headBuffer{max: 4 << 10}, reaped: make(chan struct{}), started: time.Now()}
	p.bg.Add(1) // start runs in the background: the count is not 0
	go w.wait(errR)

	timer := time.AfterFunc(startTimeout, func() { w.kill("start") })
	f, _, err := readFrame(w.out, 0)
	stopped := timer.Stop()
	if err == nil && f.T != "hello" {
		err = fmt.Errorf("it said %q first, not hello", f.T)
	}
	if err != nil {
		w.end("start")
		<-w.reaped
		why := w.exitText()
		if !stopped {
			why = fmt.Sprintf("it did not say it was ready within %s", startTimeout)
		}
		return nil, fmt.Errorf("%s: %s (a program that embeds Code Mode must call codemode.WorkerMain first thing in main, or give PoolOptions.Command)", strings.Join(cmd.Args, " "), why)
	}
	root := p.root()
	root.mu.Lock()
	first := root.layers == nil
	if first {
		root.layers = f.Layers
	}
	root.mu.Unlock()
	if first {
		root.logLayers(f.Layers)
	}
	return w, nil
}

// selfCommand runs this executable as a worker, with the same argv[0] (a
// program that dispatches on its own name, as a multi-call binary or a
// test binary does, then runs the same code).
func selfCommand() (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find this executable to start a worker: %w", err)
	}
	cmd := exec.Command(exe, WorkerArg)
	cmd.Args[0] = os.Args[0]
	return cmd, nil
}

// logLayers logs, once for the pool, the sandbox layers its workers lack
// (warn) and those they have (debug).
func (p *Pool) logLayers(layers []Layer) {
	p.logOnce.Do(func() {
		for _, l := range layers {
			if l.Active {
				p.logf(slog.LevelDebug, "code mode: worker sandbox layer", "layer", l.Name, "detail", l.Detail)
			} else {
				p.logf(slog.LevelWarn, "code mode: worker sandbox layer unavailable", "layer", l.Name, "detail", l.Detail)
			}
		}
	})
}

// wait reaps the worker once it has exited and its standard error has
// been read, then tells OnExit.
func (w *worker) wait(errR *os.File) {
	defer w.p.bg.Done()
	drained := make(chan struct{})
	go func() {
		io.Copy(w.stderr, errR)
		errR.Close()
		close(drained)
	}()
	w.group.WaitExited()
	w.mu.Lock()
	w.exited = true
	w.mu.Unlock()
	<-drained
	w.cmd.Wait()
	w.group.Close()
	w.mu.Lock()
	w.state = w.cmd.ProcessState
	cause := w.cause
	running := w.running
	w.mu.Unlock()
	// A run still reads the worker's last frames from the pipe (its
	// result, written just before it exited): closing the pipe's read end
	// would throw them away, and the run would report a worker that
	// exited with status 0 before its script was done. The run closes
	// them when it is done.
	if !running {
		w.closeFiles()
	}
	close(w.reaped)
	if w.p.opts.OnExit != nil {
		if cause == "" {
			cause = "died"
		}
		peak := w.peak.Load()
		if peak == 0 {
			peak = peakRSS(w.state)
		}
		w.p.opts.OnExit(WorkerExit{PID: w.pid, PeakRSS: peak, Cause: cause})
	}
}

// notePeak records n bytes of resident memory seen.
func (w *worker) notePeak(n int64) {
	for {
		old := w.peak.Load()
		if n <= old || w.peak.CompareAndSwap(old, n) {
			return
		}
	}
}

// kill kills the worker's process group, unless it has exited, and
// records why (the first reason given).
func (w *worker) kill(cause string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cause == "" {
		w.cause = cause
	}
	if !w.exited {
		w.group.Kill()
	}
}

// end kills the worker (it serves one script) and lets it be reaped in
// the background.
func (w *worker) end(cause string) { w.kill(cause) }

// abort kills the worker and closes the pool's end of its output, so that
// the run waiting for its next frame returns now rather than once the
// process is gone: a killed process runs no more of its script, but the
// kernel frees its memory before it closes its pipes, which takes a while
// for a few hundred MiB on a busy machine.
func (w *worker) abort(cause string) {
	w.kill(cause)
	w.files[1].Close()
}

// closeFiles closes the pool's ends of the worker's pipes, once.
func (w *worker) closeFiles() {
	w.closeOnce.Do(func() {
		for _, f := range w.files {
			f.Close()
		}
	})
}

// gone reports whether the process has exited.
func (w *worker) gone() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.exited
}

// exitText says how a reaped worker ended, with the first line of what it
// wrote on standard error.
func (w *worker) exitText() string {
	w.mu.Lock()
	ps := w.state
	w.mu.Unlock()
	s := "it ended"
	if ps != nil {
		if code, sig := w.group.Status(ps); code != nil {
			s = fmt.Sprintf("it exited with status %d", *code)
		} else {
			s = "it was killed by " + sig
		}
	}
	if line := w.stderr.firstLine(); line != "" {
		s += ": " + line
	}
	return s
}

// outOfMemory reports whether the worker's standard error says the Go
// runtime ran out of memory: the operating system refused it more (the
// run's RLIMIT_DATA).
func (w *worker) outOfMemory() bool {
	s := w.stderr.String()
	// A thread the runtime (or, in a cgo build, libc) could not start: its
	// stack is data too, and RLIMIT_DATA refuses it.
	return strings.Contains(s, "out of memory") || strings.Contains(s, "cannot allocate memory") ||
		strings.Contains(s, "failed to create new OS thread") || strings.Contains(s, "pthread_create failed")
}

// session runs one script on w and fills res; it returns why the worker
// ended, for WorkerExit.
func (p *Pool) session(ctx context.Context, w *worker, code string, tools []Tool, opts Options, res *Result) string {
	runCtx, cancel := context.WithTimeoutCause(ctx, opts.Timeout, ErrTimeout)
	defer cancel()
	byName := map[string]Tool{}
	var names []string
	for _, t := range tools {
		if t.Name == Name || t.Name == "" || t.Call == nil {
			continue
		}
		if _, dup := byName[t.Name]; !dup {
			names = append(names, t.Name)
		}
		byName[t.Name] = t
	}
	wo := wireOptions{Timeout: opts.Timeout, CopyCap: opts.CopyCap, MaxCalls: opts.MaxCalls, MaxLogBytes: opts.MaxLogBytes, MaxMemory: opts.MaxMemory, MaxStackDepth: opts.MaxStackDepth}
	watch := p.watch(ctx, w, opts)
	defer watch.stop()
	if err := writeFrame(w.in, &frame{T: "run", Opts: &wo, Tools: names}, []byte(code)); err != nil {
		return p.lost(w, watch, opts, res, err)
	}
	toolCtx := context.WithValue(runCtx, workerPIDKey{}, w.pid)
	if watch.base > 0 {
		toolCtx = context.WithValue(toolCtx, workerResidentKey{}, watch.base)
	}
	calls := 0
	for {
		f, body, err := readFrame(w.out, maxBody)
		if err != nil {
			return p.lost(w, watch, opts, res, err)
		}
		switch f.T {
		case "call":
			calls++
			if calls > opts.MaxCalls {
				// The worker stops the script at its limit itself.
				w.kill("calls")
				res.Error = &Error{Kind: "calls", Err: ErrTooManyCalls, Message: fmt.Sprintf("the script made more than %d tool calls and was stopped; do fewer calls per run", opts.MaxCalls)}
				return "calls"
			}
			reply, out := p.call(runCtx, toolCtx, byName, calls, f.Tool, body, opts, res)
			if err := writeFrame(w.in, reply, out); err != nil {
				return p.lost(w, watch, opts, res, err)
			}
		case "done":
			watch.stop()
			res.Complete, res.Logs, res.LogsCut, res.Calls = f.Complete, f.Logs, f.LogsCut, f.Calls
			if !f.Undefined {
				res.Value = body
			}
			if e := f.Error; e != nil {
				e.Err = sentinel(e.Kind)
				res.Error = e
			}
			return "done"
		default:
			w.kill("died")
			return p.lost(w, watch, opts, res, fmt.Errorf("it sent %q, not a call or its result", f.T))
		}
	}
}

// call runs one tool call of the worker's and returns the reply, with
// the bridge rule applied to the result first.
func (p *Pool) call(runCtx, toolCtx context.Context, byName map[string]Tool, call int, tool string, args json.RawMessage, opts Options, res *Result) (*frame, []byte) {
	reply := &frame{T: "result"}
	t, ok := byName[tool]
	switch {
	case !ok:
		reply.Err = "no tool named " + tool
		return reply, nil
	case runCtx.Err() != nil:
		reply.Stop = ctxStop(runCtx)
		return reply, nil
	}
	out, err := t.Call(toolCtx, args)
	if err != nil {
		if len(bytes.TrimSpace(out)) > 0 {
			// A result given with the error: its copies are listed.
			applyBridge(context.WithoutCancel(runCtx), opts, &res.Retained, call, tool, args, out)
		}
		reply.Err, reply.ErrKind = err.Error(), errorKind(err)
		if runCtx.Err() != nil {
			reply.Stop = ctxStop(runCtx)
		}
		return reply, nil
	}
	if len(bytes.TrimSpace(out)) == 0 {
		out = json.RawMessage("null")
	}
	applyBridge(runCtx, opts, &res.Retained, call, tool, args, out)
	return reply, out
}

func ctxStop(ctx context.Context) string {
	if errors.Is(ctxErr(ctx), ErrTimeout) {
		return "timeout"
	}
	return "canceled"
}

// workerPIDKey carries, in the context of a tool call, the pid of the
// worker that made it.
type workerPIDKey struct{}

// WorkerPID returns the pid of the worker process whose script made the
// tool call ctx belongs to (ok false for a run in this process): for
// logs, and for benchmarks that watch the worker.
func WorkerPID(ctx context.Context) (pid int, ok bool) {
	pid, ok = ctx.Value(workerPIDKey{}).(int)
	return pid, ok
}

// workerResidentKey carries, in the context of a tool call, the resident
// memory of the worker when its run started.
type workerResidentKey struct{}

// WorkerResident returns the resident memory, in bytes, of the worker
// process whose script made the tool call ctx belongs to, as the pool read
// it when the run started: the pool kills the worker when its resident
// memory has grown past the run's bound from there. ok is false for a run
// in this process, or where it could not be read. For benchmarks that
// watch the worker.
func WorkerResident(ctx context.Context) (resident int64, ok bool) {
	resident, ok = ctx.Value(workerResidentKey{}).(int64)
	return resident, ok
}

// sentinel is the sentinel error of an error kind.
func sentinel(kind string) error {
	switch kind {
	case "syntax":
		return ErrSyntax
	case "timeout":
		return ErrTimeout
	case "canceled":
		return ErrCanceled
	case "memory":
		return ErrMemory
	case "stack":
		return ErrStack
	case "calls":
		return ErrTooManyCalls
	case "result":
		return ErrResult
	case "worker":
		return ErrWorker
	}
	return ErrThrown
}

// lostCause says why a worker stopped answering before its work was done
// (err is what reading its answer returned): the watch killed it
// ("memory", "timeout", "canceled", with the watch's detail), the
// operating system refused it memory ("memory", "os"), or it died (the
// worker's own cause, or ""). It stops the watch, and waits for the
// process to end when the watch did not end it.
func lostCause(w *worker, watch *watch, err error) (cause, detail string) {
	if errors.Is(err, errFrameSize) {
		w.kill("died")
	}
	watch.stop()
	cause, detail = watch.result()
	if cause != "" {
		return cause, detail
	}
	// Not the watch: wait for the process to end, to say how.
	select {
	case <-w.reaped:
	case <-time.After(2 * time.Second):
		w.kill("died")
		<-w.reaped
	}
	w.mu.Lock()
	cause = w.cause
	w.mu.Unlock()
	if cause == "" && w.outOfMemory() {
		return "memory", "os"
	}
	return cause, detail
}

// lost reports a worker that stopped answering before its script was
// done: the watch killed it (memory, time, the caller), the operating
// system refused it memory, or it died.
func (p *Pool) lost(w *worker, watch *watch, opts Options, res *Result, err error) string {
	cause, detail := lostCause(w, watch, err)
	switch cause {
	case "memory":
		res.Error = memoryKilled(opts.MaxMemory, detail)
	case "timeout":
		res.Error = &Error{Kind: "timeout", Err: ErrTimeout, Message: fmt.Sprintf("the script ran past its timeout of %s and was stopped (its worker process was killed); do less per run, or give a larger timeout_ms", opts.Timeout)}
	case "canceled":
		res.Error = &Error{Kind: "canceled", Err: ErrCanceled, Message: "the run was canceled by its caller (its worker process was killed)"}
	default:
		if cause == "" {
			cause = "died"
		}
		res.Error = &Error{Kind: "worker", Err: ErrWorker, Message: fmt.Sprintf("the script's worker process (pid %d) ended before the script did: %s; the server is unaffected and the copies listed in retained are kept: run the script again", w.pid, diedWhy(w, err))}
	}
	return cause
}

// diedWhy waits for a worker that died on its own to be reaped and says
// how it ended: its exit, or the oversized frame (err) it sent.
func diedWhy(w *worker, err error) string {
	<-w.reaped
	if errors.Is(err, errFrameSize) {
		return err.Error()
	}
	return w.exitText()
}

// memoryKilled is the error of a worker stopped past its memory bound:
// by the server's watch (detail gives the figures) or by the operating
// system (detail "os").
func memoryKilled(bound int64, detail string) *Error {
	var msg string
	if detail == "os" {
		msg = fmt.Sprintf("memory limit exceeded: the script's data grew past its worker process's hard limit (the %d MiB bound plus %d MiB) and the operating system refused it more", bound>>20, (sandbox.HardGrowth(bound)-bound)>>20)
	} else {
		msg = fmt.Sprintf("memory limit exceeded: the script's worker process went past the %d MiB bound (%s) and was killed", bound>>20, detail)
	}
	return &Error{Kind: "memory", Err: ErrMemory, Message: msg + "; keep less in memory (slice or filter results as you go)"}
}

// watch is the server's watch of one run's worker: its resident memory
// every watchEvery, its time, and the caller's context.
type watch struct {
	done   chan struct{}
	ended  chan struct{}
	once   sync.Once
	base   int64 // the worker's resident memory when the run started (0: unread)
	cause  string
	detail string
}

func (p *Pool) watch(ctx context.Context, w *worker, opts Options) *watch {
	wt := &watch{done: make(chan struct{}), ended: make(chan struct{})}
	var rd *procmem.Reader
	var base int64
	if r, err := procmem.Open(w.pid); err == nil {
		if b, err := r.Resident(); err == nil {
			rd, base, wt.base = r, b, b
			w.notePeak(b)
		} else {
			r.Close()
		}
	}
	go func() {
		defer close(wt.ended)
		if rd != nil {
			defer rd.Close()
			// The peak so far, once more at the end: while the worker
			// lives (its script is done) the operating system has it.
			defer func() {
				if pk, err := rd.Peak(); err == nil {
					w.notePeak(pk)
				}
			}()
		}
		deadline := time.NewTimer(plus(opts.Timeout, killGrace))
		defer deadline.Stop()
		var tick <-chan time.Time
		ticks := 0
		if rd != nil {
			t := time.NewTicker(watchEvery)
			defer t.Stop()
			tick = t.C
		}
		for {
			select {
			case <-wt.done:
				return
			case <-ctx.Done():
				wt.cause = "canceled"
			case <-deadline.C:
				wt.cause = "timeout"
			case <-tick:
				rss, err := rd.Resident()
				if err != nil {
					continue
				}
				w.notePeak(rss)
				if ticks++; ticks%5 == 0 {
					if pk, err := rd.Peak(); err == nil {
						w.notePeak(pk)
					}
				}
				if opts.MaxMemory <= 0 {
					continue
				}
				if rss-base <= opts.MaxMemory {
					continue
				}
				wt.cause = "memory"
				wt.detail = fmt.Sprintf("its resident memory grew by %.1f MiB", float64(rss-base)/(1<<20))
			}
			w.abort(wt.cause)
			return
		}
	}()
	return wt
}

// stop ends the watch and waits for it.
func (wt *watch) stop() {
	wt.once.Do(func() { close(wt.done) })
	<-wt.ended
}

// result is why the watch killed the worker ("" when it did not), after
// stop.
func (wt *watch) result() (cause, detail string) { return wt.cause, wt.detail }

// headBuffer keeps the first max bytes written to it and counts the rest.
type headBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (h *headBuffer) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - len(h.buf); room > 0 {
		h.buf = append(h.buf, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

func (h *headBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return string(h.buf)
}

// firstLine is the first non-empty line written, cut to 300 bytes.
func (h *headBuffer) firstLine() string {
	for _, l := range strings.Split(h.String(), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return present.OneLine(l, 300)
		}
	}
	return ""
}

// plus is a + b, or the longest duration where the sum would wrap around
// (a timeout_ms near the largest one accepted): a timer of a negative
// duration fires at once.
func plus(a, b time.Duration) time.Duration {
	if a > 0 && b > math.MaxInt64-a {
		return math.MaxInt64
	}
	return a + b
}
