package codemode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/scrollback-dev/scrollback/codemode/internal/sandbox"
	"github.com/scrollback-dev/scrollback/jsonq"
)

// WorkerArg is the argument that starts an executable as a Code Mode
// worker: a Pool runs its command (by default this executable) with it,
// and the program's main serves as a worker when it sees it (WorkerMain).
const WorkerArg = "__code-worker"

// workerEnv is set, to protocolVersion, in the environment of each worker
// a Pool starts: with WorkerArg, it tells a worker started by a Pool from
// the argument typed by hand.
const (
	workerEnv       = "SCROLLBACK_CODE_WORKER"
	protocolVersion = "1"
	// workerLightEnv, set to 1, has a worker skip the warm-up (a Pool of
	// PoolOptions.Light).
	workerLightEnv = "SCROLLBACK_CODE_WORKER_LIGHT"
)

// IsWorker reports whether this process was started as a Code Mode worker
// by a Pool: its first argument is WorkerArg, and the Pool's mark is in
// its environment.
func IsWorker() bool {
	return len(os.Args) > 1 && os.Args[1] == WorkerArg && os.Getenv(workerEnv) == protocolVersion
}

// WorkerMain serves as a Code Mode worker, and exits, when this process
// was started as one by a Pool (IsWorker); otherwise it returns at once. A
// program that runs scripts through a Pool whose Command is the default
// (this executable) calls it first thing in main:
//
//	func main() {
//		codemode.WorkerMain()
//		// ... the program as usual
//	}
func WorkerMain() {
	if IsWorker() {
		os.Exit(ServeWorker())
	}
}

// ServeWorker serves as a Code Mode worker on standard input and output,
// and returns the process's exit code: it warms up, drops what it does not
// need (package sandbox), says it is ready, runs the one script it is
// sent, sends the result and returns. It refuses to serve (exit code 2)
// when the process was not started by a Pool. Nothing else may write to
// standard output meanwhile: it is the protocol's.
func ServeWorker() int {
	if os.Getenv(workerEnv) != protocolVersion {
		fmt.Fprintf(os.Stderr, "%s is internal: Code Mode starts it (a Pool's worker process), with %s=%s in its environment\n", WorkerArg, workerEnv, protocolVersion)
		return 2
	}
	// The script runs on this goroutine: locked to this thread, so that a
	// sandbox layer that can only hold for one thread holds for the
	// script's.
	runtime.LockOSThread()
	// One more P than the CPUs: while a collection's dedicated mark
	// worker holds one P and the script (inside one long native copy,
	// which cannot be preempted) the other, the memory watch still gets
	// one, and can stop the script before its next huge allocation,
	// which the operating system would refuse, ending the worker without
	// the script's line.
	runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
	in, out := bufio.NewReaderSize(os.Stdin, 64<<10), bufio.NewWriterSize(os.Stdout, 64<<10)
	os.Stdout = os.Stderr // a stray print must not corrupt the protocol
	sandbox.Prepare()
	if os.Getenv(workerLightEnv) != "1" {
		warmUp()
	}
	layers := sandbox.Apply()
	// Start light: the warm-up's garbage given back before the run's
	// baseline is read.
	debug.FreeOSMemory()
	if err := writeFrame(out, &frame{T: "hello", PID: os.Getpid(), Layers: layers}, nil); err != nil {
		return 1
	}
	// The pool is trusted: a query's copy may be larger than a script's
	// frames.
	f, code, err := readFrame(in, math.MaxInt)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return 0 // the pool closed without using this worker
		}
		fmt.Fprintln(os.Stderr, "codemode worker:", err)
		return 1
	}
	if f.T == "query" && f.Query != nil {
		return serveQuery(out, f.Query, code)
	}
	if f.T != "run" || f.Opts == nil {
		fmt.Fprintf(os.Stderr, "codemode worker: want a run or query frame, got %q\n", f.T)
		return 1
	}
	w := &workerRun{in: in, out: out}
	res := w.run(string(code), f.Tools, *f.Opts)
	done := &frame{T: "done", Complete: res.Complete, Undefined: res.Value == nil, Logs: res.Logs, LogsCut: res.LogsCut, Error: res.Error, Calls: res.Calls}
	if err := writeFrame(out, done, res.Value); err != nil {
		return 1
	}
	return 0
}

// warmUp runs a small TypeScript script through esbuild and goja, awaits
// and a tool call included, so that the first real script finds both
// initialized (esbuild's first transform costs far more than the next),
// and loads the local time zone, which goja's Date reads and which no file
// can be opened for once the sandbox holds.
func warmUp() {
	_ = time.Now().Local().String()
	echo := Tool{Name: "echo", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) { return args, nil }}
	const code = `interface R { n: number }
const [a, b] = await Promise.all([tools.echo({n: 1}), tools.echo({n: 2})]);
const xs: number[] = Array.from({length: 10}, (_, i) => i).map((i: number) => i * (a as R).n).filter(Boolean);
console.log(JSON.stringify({xs, d: new Date(0).toISOString()}));
return {sum: xs.reduce((s, x) => s + x, 0) + b.n, s: ` + "`${xs.length}`" + `};`
	Run(context.Background(), code, []Tool{echo}, Options{MaxMemory: -1})
	// A query's first filter too: gojq's builtins, and the parser.
	if f, err := jsonq.Compile(`.a | map(tostring | ascii_downcase) | sort | length`); err == nil {
		doc := []byte(`{"a": [1, "B", null, {"c": [true]}]}`)
		jsonq.Run(context.Background(), f, bytes.NewReader(doc), int64(len(doc)), jsonq.Options{MaxMemory: -1})
	}
}

// workerRun is the worker's side of one run: its tools call the pool.
type workerRun struct {
	in  *bufio.Reader
	out *bufio.Writer
}

// stopError is a tool call's answer when the pool says the run is over:
// the script is stopped with cause, as a run whose context ended.
type stopError struct{ cause error }

func (e *stopError) Error() string { return e.cause.Error() }

func (w *workerRun) run(code string, names []string, wo wireOptions) Result {
	opts := Options{
		Timeout:       wo.Timeout,
		CopyCap:       wo.CopyCap,
		MaxCalls:      wo.MaxCalls,
		MaxLogBytes:   wo.MaxLogBytes,
		MaxMemory:     wo.MaxMemory,
		MaxStackDepth: wo.MaxStackDepth,
	}.withDefaults()
	tools := make([]Tool, 0, len(names))
	for _, name := range names {
		tools = append(tools, Tool{Name: name, Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
			return w.call(name, args)
		}})
	}
	var mem *memoryWatch
	bound := opts.MaxMemory
	if bound < 0 {
		bound = 0
	}
	// The data segment now: the server's watch counts the run's growth
	// from about here, and kills the worker past the bound.
	data0, dataErr := sandbox.Data()
	// The operating system's limits, the run's CPU at most twice its
	// time plus the start (a backstop: the pool kills the worker at its
	// time limit).
	sandbox.LimitRun(bound, inUse(), plus(plus(opts.Timeout, opts.Timeout), 5*time.Second))
	if bound > 0 {
		// The worker lives for this one script: collect only near the
		// memory limit just set (its soft limit), not every time the
		// small heap doubles.
		debug.SetGCPercent(-1)
	}
	if opts.MaxMemory > 0 {
		mem = newMemoryWatch(opts.MaxMemory)
		if dataErr == nil {
			mem.data = func() (uint64, bool) {
				d, err := sandbox.Data()
				return uint64(max(d-data0, 0)), err == nil
			}
		}
		defer lowerSoftLimit(opts.MaxMemory)()
	}
	return runWith(context.Background(), code, tools, opts, mem, true)
}

// call sends one tool call to the pool and waits for its result.
func (w *workerRun) call(tool string, args json.RawMessage) (json.RawMessage, error) {
	if len(args) > maxArgsBytes {
		return nil, fmt.Errorf("the arguments are %d bytes, over the limit of %d MiB for one call; pass less, or refer to a retained copy by its output_id", len(args), maxArgsBytes>>20)
	}
	if err := writeFrame(w.out, &frame{T: "call", Tool: tool}, args); err != nil {
		return nil, &stopError{fmt.Errorf("%w: the server is gone (%v)", ErrCanceled, err)}
	}
	f, body, err := readFrame(w.in, math.MaxInt)
	if err != nil {
		return nil, &stopError{fmt.Errorf("%w: the server is gone (%v)", ErrCanceled, err)}
	}
	switch {
	case f.Stop == "timeout":
		return nil, &stopError{ErrTimeout}
	case f.Stop != "":
		return nil, &stopError{ErrCanceled}
	case f.Err != "" && f.ErrKind != "":
		return nil, &KindError{Err: errors.New(f.Err), Kind: f.ErrKind}
	case f.Err != "":
		return nil, errors.New(f.Err)
	}
	return body, nil
}
