package codemode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime/debug"
	"time"

	"github.com/scrollback-dev/scrollback/codemode/internal/sandbox"
	"github.com/scrollback-dev/scrollback/jsonq"
)

// A Pool's workers also run jq filters (package jsonq) for the server:
// one filter over one copy in a worker process of its own (a light one,
// of the pool's query workers: see PoolOptions.QuerySize), under the
// same limits the operating system enforces for a script's, so that a
// filter whose single step blows up (tojson of a structure that shares
// one large value many times, a huge repeat or setpath) ends its worker,
// not the server. The protocol, after hello:
//
//	pool → worker   query   {query}                               the copy's bytes
//	worker → pool   done    {query_done}                          the results
//
// The worker compiles the filter again, runs jsonq.Run on the copy with
// the same options, and sends back the results or the *jsonq.Error, which
// the pool rebuilds with the same message, hint, offset and line.

// wireQuery is what a worker needs to run a filter.
type wireQuery struct {
	Filter    string        `json:"filter"`
	Timeout   time.Duration `json:"timeout"`
	MaxOutput int           `json:"max_output"`
	MaxMemory int64         `json:"max_memory"`
	Complete  bool          `json:"complete,omitempty"`
}

// wireQueryDone is a filter's outcome: the error, or what the results
// (the frame's body) came with.
type wireQueryDone struct {
	Error      *wireQueryError `json:"error,omitempty"`
	Results    int             `json:"results,omitempty"`
	Documents  int             `json:"documents,omitempty"`
	Stopped    int64           `json:"stopped"`
	StopReason string          `json:"stop_reason,omitempty"`
	Gaps       []jsonq.Gap     `json:"gaps,omitempty"`
}

// wireQueryError is a *jsonq.Error, its sentinel named by kind.
type wireQueryError struct {
	Kind   string `json:"kind"`
	Msg    string `json:"msg"`
	Hint   string `json:"hint,omitempty"`
	Offset int64  `json:"offset,omitempty"`
	Line   int64  `json:"line,omitempty"`
}

// queryKinds names jsonq's sentinel errors on the wire.
var queryKinds = map[string]error{
	"filter":  jsonq.ErrFilter,
	"syntax":  jsonq.ErrSyntax,
	"cut":     jsonq.ErrCut,
	"runtime": jsonq.ErrRuntime,
	"time":    jsonq.ErrTimeLimit,
	"output":  jsonq.ErrOutputLimit,
	"memory":  jsonq.ErrMemoryLimit,
}

func queryKind(err error) string {
	for k, s := range queryKinds {
		if err == s {
			return k
		}
	}
	return "runtime"
}

// Query runs the jq filter f over the copy of size bytes that r holds, as
// jsonq.Run does, in a worker process of the pool's: one of its light
// query workers (PoolOptions.QuerySize), never one kept for scripts, so
// that filters and scripts do not wait for each other's starts. The copy
// is read here (all of it, before the filter starts) and sent to the
// worker, which runs the filter under opts and the operating system's limits
// (RLIMIT_DATA at opts.MaxMemory plus sandbox.HardGrowth's margin, and
// RLIMIT_CPU, on Linux), while the server watches its resident memory and
// time as it does a script's. The results and errors are jsonq.Run's,
// message for message; a worker killed past its memory or time bound is
// the *jsonq.Error of that limit (ErrMemoryLimit, ErrTimeLimit), saying
// the worker was killed; a worker that died otherwise is an ErrRuntime
// *jsonq.Error. An error reading r is returned wrapped, as jsonq.Run
// wraps it; an error wrapping ErrWorker means no worker could be
// started. A nil Pool runs the filter in this process (jsonq.Run).
func (p *Pool) Query(ctx context.Context, f *jsonq.Filter, r io.ReaderAt, size int64, opts jsonq.Options) (*jsonq.Result, error) {
	if p == nil {
		return jsonq.Run(ctx, f, r, size, opts)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = jsonq.DefaultTimeout
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = jsonq.DefaultMaxOutput
	}
	if opts.MaxMemory == 0 {
		opts.MaxMemory = jsonq.DefaultMaxMemory
	}
	if size < 0 || size > math.MaxUint32 {
		return nil, fmt.Errorf("jsonq: reading the copy: a copy of %d bytes cannot be sent to a worker process (at most %d)", size, uint32(math.MaxUint32))
	}
	if p.queries != nil {
		p = p.queries // light workers of their own, not the scripts'
	}
	w, err := p.get(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: no worker process could be started for the query: %v", ErrWorker, err)
	}
	w.mu.Lock()
	w.running = true
	w.mu.Unlock()
	res, cause, err := p.querySession(ctx, w, f, r, size, opts)
	w.end(cause)
	w.closeFiles()
	p.refill()
	return res, err
}

// readError is an error of the reader of the copy being sent.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }

// querySession runs one filter on w; it returns why the worker ended,
// for WorkerExit, with the result.
func (p *Pool) querySession(ctx context.Context, w *worker, f *jsonq.Filter, r io.ReaderAt, size int64, opts jsonq.Options) (*jsonq.Result, string, error) {
	// The worker's own watch stops a filter whose heap grows past
	// opts.MaxMemory between two steps, with jsonq's error; the server's
	// watch kills a worker whose resident memory (the heap, and the
	// runtime's own) has grown past it by the operating system's margin
	// too, as a filter that grows in one step does.
	bound := opts.MaxMemory
	if bound > 0 {
		bound = sandbox.HardGrowth(bound)
	}
	watch := p.watch(ctx, w, Options{Timeout: opts.Timeout, MaxMemory: bound})
	defer watch.stop()
	q := &wireQuery{Filter: f.String(), Timeout: opts.Timeout, MaxOutput: opts.MaxOutput, MaxMemory: opts.MaxMemory, Complete: opts.Complete}
	if err := writeFrameFrom(w.in, &frame{T: "query", Query: q}, r, size); err != nil {
		var re *readError
		if errors.As(err, &re) {
			w.kill("canceled")
			if ctx.Err() != nil {
				return nil, "canceled", ctx.Err()
			}
			return nil, "canceled", fmt.Errorf("jsonq: reading the copy: %w", re.err)
		}
		return p.queryLost(ctx, w, watch, opts, bound, err)
	}
	fr, body, err := readFrame(w.out, opts.MaxOutput+1)
	if err != nil {
		return p.queryLost(ctx, w, watch, opts, bound, err)
	}
	if fr.T != "done" || fr.QueryDone == nil {
		w.kill("died")
		return p.queryLost(ctx, w, watch, opts, bound, fmt.Errorf("it sent %q, not the query's result", fr.T))
	}
	watch.stop()
	d := fr.QueryDone
	if e := d.Error; e != nil {
		kind, ok := queryKinds[e.Kind]
		if !ok {
			kind = jsonq.ErrRuntime
		}
		return nil, "done", &jsonq.Error{Err: kind, Msg: e.Msg, Hint: e.Hint, Offset: e.Offset, Line: e.Line}
	}
	return &jsonq.Result{Text: body, Results: d.Results, Documents: d.Documents, Stopped: d.Stopped, StopReason: d.StopReason, Gaps: d.Gaps}, "done", nil
}

// queryLost reports a worker that stopped answering before its filter
// was done: the watch killed it (memory, time, the caller), the
// operating system refused it memory, or it died.
func (p *Pool) queryLost(ctx context.Context, w *worker, watch *watch, opts jsonq.Options, bound int64, err error) (*jsonq.Result, string, error) {
	cause, detail := lostCause(w, watch, err)
	switch cause {
	case "memory":
		e := jsonq.LimitError(jsonq.ErrMemoryLimit, opts.Timeout, opts.MaxMemory)
		if detail == "os" {
			e.Msg += fmt.Sprintf(" (its worker process's data grew past its hard limit, the %d MiB bound plus %d MiB, and the operating system refused it more)",
				opts.MaxMemory>>20, (sandbox.HardGrowth(opts.MaxMemory)-opts.MaxMemory)>>20)
		} else {
			e.Msg += fmt.Sprintf(" (its worker process was killed: %s, past the bound plus %d MiB)", detail, (bound-opts.MaxMemory)>>20)
		}
		return nil, cause, e
	case "timeout":
		e := jsonq.LimitError(jsonq.ErrTimeLimit, opts.Timeout, opts.MaxMemory)
		e.Msg += " (its worker process was killed)"
		return nil, cause, e
	case "canceled":
		if ctx.Err() != nil {
			return nil, cause, ctx.Err()
		}
		return nil, cause, context.Canceled
	}
	if cause == "" {
		cause = "died"
	}
	return nil, cause, &jsonq.Error{Err: jsonq.ErrRuntime,
		Msg:  fmt.Sprintf("the filter's worker process (pid %d) ended before the filter did: %s; the server is unaffected", w.pid, diedWhy(w, err)),
		Hint: "run the query again; if it ends the same way, simplify the filter"}
}

// writeFrameFrom writes one frame whose body is the size bytes r holds,
// read as they are sent, and flushes it. An error reading r is a
// *readError.
func writeFrameFrom(w *bufio.Writer, f *frame, r io.ReaderAt, size int64) error {
	h, err := json.Marshal(f)
	if err != nil {
		return err
	}
	var lens [8]byte
	binary.BigEndian.PutUint32(lens[:4], uint32(len(h)))
	binary.BigEndian.PutUint32(lens[4:], uint32(size))
	w.Write(lens[:])
	if _, err := w.Write(h); err != nil {
		return err
	}
	buf := make([]byte, 256<<10)
	for off := int64(0); off < size; {
		n, rerr := r.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				return err
			}
			off += int64(n)
		}
		if off < size && rerr != nil {
			if rerr == io.EOF {
				rerr = io.ErrUnexpectedEOF
			}
			return &readError{rerr}
		}
		if n == 0 && rerr == nil {
			return &readError{io.ErrNoProgress}
		}
	}
	return w.Flush()
}

// serveQuery runs the filter a query frame sent on the copy in its body,
// and sends the outcome; it returns the process's exit code.
func serveQuery(out *bufio.Writer, q *wireQuery, copy []byte) int {
	d, text := runQuery(q, copy)
	if err := writeFrame(out, &frame{T: "done", QueryDone: d}, text); err != nil {
		return 1
	}
	return 0
}

func runQuery(q *wireQuery, copy []byte) (*wireQueryDone, []byte) {
	fail := func(err error) *wireQueryDone {
		var je *jsonq.Error
		if !errors.As(err, &je) {
			return &wireQueryDone{Error: &wireQueryError{Kind: "runtime", Msg: "the filter failed: " + err.Error()}}
		}
		return &wireQueryDone{Error: &wireQueryError{Kind: queryKind(je.Err), Msg: je.Msg, Hint: je.Hint, Offset: je.Offset, Line: je.Line}}
	}
	f, err := jsonq.Compile(q.Filter)
	if err != nil {
		return fail(err), nil
	}
	bound := max(q.MaxMemory, 0)
	// The operating system's limits from here, the copy received: the
	// data segment may grow by the bound and a margin, the CPU time run
	// to twice the timeout and a start (a backstop: the pool kills the
	// worker at its time limit).
	sandbox.LimitRun(bound, inUse(), plus(plus(q.Timeout, q.Timeout), 5*time.Second))
	// The worker lives for this one filter and starts with a small heap:
	// collect when it has grown four times over, not at every doubling
	// (a 1 MB copy's documents then take about a third less time; the
	// soft limit LimitRun set still collects near the bound).
	debug.SetGCPercent(400)
	res, err := jsonq.Run(context.Background(), f, bytes.NewReader(copy), int64(len(copy)), jsonq.Options{
		Timeout:   q.Timeout,
		MaxOutput: q.MaxOutput,
		MaxMemory: q.MaxMemory,
		Complete:  q.Complete,
	})
	if err != nil {
		return fail(err), nil
	}
	return &wireQueryDone{Results: res.Results, Documents: res.Documents, Stopped: res.Stopped, StopReason: res.StopReason, Gaps: res.Gaps}, res.Text
}
