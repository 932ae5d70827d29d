package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/internal/utf8x"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/preview"
)

// Name is the tool name of Code Mode itself. A script cannot call it: a
// tools.run_code call is refused with an error (a Tool of that name given to
// Run is ignored).
const Name = "run_code"

// Defaults used for zero Options fields.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultBudget        = preview.Budget      // 24,576 bytes: the preview budget
	DefaultCopyCap       = capture.DefaultCopy // 8 MiB: the most one retained copy holds
	DefaultMaxCalls      = 1000
	DefaultMaxLogBytes   = 64 << 10
	DefaultMaxMemory     = 256 << 20
	DefaultMaxStackDepth = 10000
)

// Sentinel errors. A run's Error wraps one of them (errors.Is works on
// Result.Error) to say why the run ended.
var (
	// ErrSyntax: the code does not parse as a function body.
	ErrSyntax = errors.New("codemode: syntax error")
	// ErrThrown: the script threw and did not catch it.
	ErrThrown = errors.New("codemode: uncaught exception")
	// ErrTimeout: the run went past its timeout.
	ErrTimeout = errors.New("codemode: timeout")
	// ErrCanceled: the caller's context ended the run.
	ErrCanceled = errors.New("codemode: canceled")
	// ErrMemory: the heap grew past the memory limit during the run.
	ErrMemory = errors.New("codemode: memory limit exceeded")
	// ErrStack: the script recursed past the call stack limit.
	ErrStack = errors.New("codemode: call stack limit exceeded")
	// ErrTooManyCalls: the script made more tool calls than allowed.
	ErrTooManyCalls = errors.New("codemode: too many tool calls")
	// ErrResult: the return value cannot be turned into JSON.
	ErrResult = errors.New("codemode: return value not serializable")
)

// Tool is a function a script can call as tools.Name(args).
type Tool struct {
	// Name is the property of the tools object; it should be a JavaScript
	// identifier.
	Name string
	// Description says what the tool does, for Describe.
	Description string
	// InputSchema is the JSON Schema of the argument object; OutputSchema,
	// when known, that of the result. Describe renders both as TypeScript.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	// Call runs the tool with args, a JSON object, and returns its result
	// as JSON. A returned error is thrown in the script as an Error whose
	// message names the tool (and whose kind property is a KindError's
	// Kind, when the error holds one); the script may catch it. Call runs on the
	// script's goroutine, one call at a time; ctx ends with the run.
	// A result returned with an error (a command that ran, then the run
	// ended) is not given to the script, but the copies it names are
	// listed in Result.Retained, as the bridge rule lists any.
	Call func(ctx context.Context, args json.RawMessage) (json.RawMessage, error)
}

// Copy is a nested result to save as a retained copy.
type Copy struct {
	Call     int             // 1-based index of the tool call in the run
	Tool     string          // the tool that produced it
	Args     json.RawMessage // what it was called with
	Text     []byte          // the result's text, cut at the copy cap
	Complete bool            // false when Text was cut at the copy cap
}

// SaveFunc saves a copy and returns its output id. A failed save is
// reported in the run's Retained list; the script still gets the value.
type SaveFunc func(ctx context.Context, c Copy) (id string, err error)

// Options configures a run. The zero value gives the defaults, and saves
// nothing (a nil Save makes the bridge a no-op).
type Options struct {
	Save          SaveFunc
	Timeout       time.Duration // whole run, tool calls included; 0 = DefaultTimeout
	Budget        int           // nested results longer than this are saved; 0 = DefaultBudget
	CopyCap       int           // most bytes of one saved copy or of Result.Value; 0 = DefaultCopyCap
	MaxCalls      int           // tool calls per run; 0 = DefaultMaxCalls
	MaxLogBytes   int           // console output kept; 0 = DefaultMaxLogBytes
	MaxMemory     int64         // heap growth allowed during the run; 0 = DefaultMaxMemory, <0 = no limit
	MaxStackDepth int           // JavaScript call depth; 0 = DefaultMaxStackDepth
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Budget <= 0 {
		o.Budget = DefaultBudget
	}
	if o.CopyCap <= 0 {
		o.CopyCap = DefaultCopyCap
	}
	if o.MaxCalls <= 0 {
		o.MaxCalls = DefaultMaxCalls
	}
	if o.MaxLogBytes <= 0 {
		o.MaxLogBytes = DefaultMaxLogBytes
	}
	if o.MaxMemory == 0 {
		o.MaxMemory = DefaultMaxMemory
	}
	if o.MaxStackDepth <= 0 {
		o.MaxStackDepth = DefaultMaxStackDepth
	}
	return o
}

// Ref is the recovery reference of a copy made during a run: by the bridge,
// or by a nested tool itself (a command's own copy), labelled with what it
// holds (present.HoldsOutput or present.HoldsResult) and, for a call that
// ran a command, the command.
type Ref = present.Ref

// Error is why a run ended without a value. In JSON it is
// {"kind": "exception", "message": "Error: boom", "line": 3, "column": 7};
// line and column (1-based, in the script's own lines) are omitted when
// unknown.
type Error struct {
	// Kind is syntax, exception, timeout, canceled, memory, stack, calls
	// or result.
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Err     error  `json:"-"` // one of the sentinel errors
}

func (e *Error) Error() string {
	switch {
	case e.Line > 0 && e.Column > 0:
		return fmt.Sprintf("codemode: line %d, column %d: %s", e.Line, e.Column, e.Message)
	case e.Line > 0:
		return fmt.Sprintf("codemode: line %d: %s", e.Line, e.Message)
	}
	return "codemode: " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Result is what a run produced. Retained and Logs are filled in whether or
// not the run failed.
type Result struct {
	// Value is the return value as text: a string as itself, anything else
	// as JSON; nil when the script returned nothing (undefined). It is cut
	// at the copy cap (at a UTF-8 boundary), Complete then false.
	Value    []byte
	Complete bool
	Logs     string // console output, bounded
	LogsCut  bool   // console output past the bound was dropped (Logs ends saying so)
	Error    *Error // nil when the script returned
	Retained []Ref  // every copy made during the run, oldest first; never nil
	Calls    int    // tool calls made
}

// Run runs code, the body of an async function in JavaScript or
// TypeScript, in a fresh runtime whose tools object calls tools. It always
// returns a Result; a script that failed has Result.Error set, with the
// logs and retained copies gathered before.
func Run(ctx context.Context, code string, tools []Tool, opts Options) (res Result) {
	opts = opts.withDefaults()
	var mem *memoryWatch
	if opts.MaxMemory > 0 {
		mem = newMemoryWatch(opts.MaxMemory)
		defer lowerSoftLimit(opts.MaxMemory)()
	}
	return runWith(ctx, code, tools, opts, mem, false)
}

// runWith is Run with its memory watch given (nil: none); opts has its
// defaults. bridged: the tools apply the bridge rule themselves (a
// worker's, whose pool does), so the run does not.
func runWith(ctx context.Context, code string, tools []Tool, opts Options, mem *memoryWatch, bridged bool) (res Result) {
	res = Result{Retained: []Ref{}, Complete: true}
	prg, smap, cerr := compile(code)
	if cerr != nil {
		res.Error = cerr
		return res
	}

	ctx, cancel := context.WithTimeoutCause(ctx, opts.Timeout, ErrTimeout)
	defer cancel()
	r := &run{ctx: ctx, opts: opts, res: &res, vm: goja.New(), bridged: bridged, code: code, smap: smap,
		oneLine: !strings.Contains(strings.TrimRight(code, " \t\r\n"), "\n")}
	defer func() {
		// A native function that panicked with something goja does not
		// treat as a JavaScript exception: report it, never crash.
		if x := recover(); x != nil {
			res.Error = &Error{Kind: "exception", Err: ErrThrown, Message: fmt.Sprintf("internal error: %v", x)}
			r.finishLogs()
		}
	}()
	if err := r.setup(tools); err != nil {
		res.Error = &Error{Kind: "exception", Err: ErrThrown, Message: "setting up the runtime: " + err.Error()}
		return res
	}
	vm := r.vm // the closures below must not see r.vm set to nil
	stop := context.AfterFunc(ctx, func() { vm.Interrupt(ctxErr(ctx)) })
	defer stop()
	stopWatch := func() bool { return false }
	if mem != nil {
		// The watch's interrupt ends the script at its next step, within
		// a promise job too; a script awaiting a promise that nothing will
		// settle takes no step, and is ended by memHit.
		memHit := make(chan struct{})
		r.memHit = memHit
		stopWatch = mem.start(func() { vm.Interrupt(ErrMemory); close(memHit) })
	}

	v, err := r.call(prg)
	var main *goja.Promise // the async body's own promise
	if err == nil {
		main, _ = v.Export().(*goja.Promise)
		v, err = r.settle(v)
	}
	if stopWatch() {
		// The heap was grown past the limit: give it back now rather than
		// at the next GC cycle, without keeping the caller waiting.
		v = nil
		r.vm = nil
		go forceGC(debug.FreeOSMemory)
	}
	switch {
	case err != nil:
		res.Error = r.scriptError(err)
	case v == nil && r.vm == nil: // stopped for memory just as it returned, or while it awaited
		res.Error = r.memoryError()
	case v != nil:
		r.setValue(v)
	}
	if r.vm != nil && r.ctx.Err() == nil {
		r.logUnhandled(main)
	}
	r.finishLogs()
	return res
}

// maxUnhandled is how many unhandled rejections the logs describe one by
// one; past it, they are counted.
const maxUnhandled = 10

// logUnhandled writes to the logs each promise that was rejected and had
// no handler when the run ended, other than the async body's own (main,
// which is the run's error): what it was rejected with, and where. An
// async callback the script did not await (forEach(async ...)), or a
// .then chain left to itself, fails without stopping the script; the
// failure is not lost without a word. (Node.js ends the process there.)
func (r *run) logUnhandled(main *goja.Promise) {
	ps := slices.SortedFunc(maps.Keys(r.unhandled), func(a, b *goja.Promise) int { return r.unhandled[a] - r.unhandled[b] })
	n := 0
	for _, p := range ps {
		if p == main || p.State() != goja.PromiseStateRejected {
			continue
		}
		n++
		if n > maxUnhandled {
			continue
		}
		e := r.scriptError(&rejection{p.Result()})
		at := ""
		if e.Line > 0 {
			at = fmt.Sprintf(" (line %d", e.Line)
			if e.Column > 0 {
				at += fmt.Sprintf(", column %d", e.Column)
			}
			at += ")"
		}
		r.appendLog("error: unhandled promise rejection, which nothing awaited or caught, so the script went on: " + e.Message + at + "\n")
	}
	if n > maxUnhandled {
		r.appendLog(fmt.Sprintf("error: %d more unhandled promise rejections\n", n-maxUnhandled))
	}
}

type run struct {
	ctx  context.Context
	opts Options
	res  *Result
	vm   *goja.Runtime
	// memHit is closed when the memory watch stops the run (nil: no
	// watch).
	memHit <-chan struct{}
	// bridged: the tools' caller applies the bridge rule (a worker's
	// tools call the server, which does), not the run.
	bridged bool
	// oneLine: the script is one line, where any error is (scriptError).
	oneLine bool
	// code is the script as written, smap maps positions back to it;
	// tools the names of its tools.
	code  string
	smap  *sourceMap
	tools []string
	// stopped is why the run ended while a tool call was under way
	// (ErrTimeout or ErrCanceled), stoppedIn the tool; nil otherwise.
	stopped   error
	stoppedIn string

	stringify, parse goja.Callable
	// shown is stringify for what the run shows: with a JSON form for
	// Map, Set and BigInt (prelude).
	shown     goja.Callable
	errorCtor goja.Value
	then      goja.Value // given to each object a tool returns
	catch     goja.Value // given with then
	finally   goja.Value // given with then

	// unhandled are the promises rejected with no handler, each with
	// its place in the order of rejections; a promise is taken out when a
	// handler is added (logUnhandled). A map: a script may reject and
	// then handle many thousands (Promise.allSettled of failing calls).
	unhandled map[*goja.Promise]int
	rejected  int // rejections seen, for the order of unhandled

	logs        strings.Builder
	logFull     bool
	logsDropped int
}

// call runs the compiled wrapper and calls the async function it evaluates
// to. goja runs the promise jobs (what follows each await) before the call
// returns, so the promise it gives back has settled unless it waits on
// something nothing will settle.
func (r *run) call(prg *goja.Program) (goja.Value, error) {
	fv, err := r.vm.RunProgram(prg)
	if err != nil {
		return nil, err
	}
	fn, ok := goja.AssertFunction(fv)
	if !ok {
		return nil, errors.New("the wrapped code is not a function")
	}
	return fn(goja.Undefined())
}

// rejection is a promise the script returned (or its async body) that was
// rejected.
type rejection struct{ value goja.Value }

func (e *rejection) Error() string { return "rejected" }

// pending is a promise that had not settled when nothing was left to run;
// cause is why the run was over by then (ErrTimeout, ErrCanceled), nil
// when it was not.
type pending struct{ cause error }

func (e *pending) Error() string { return "pending" }

// settle turns the async body's promise into its value or its error. A
// promise still pending has nothing left to settle it (tools are
// synchronous, there are no timers, and goja has run every job): the run
// ends at once and says why, rather than wait out its timeout for
// nothing; nil, nil when the memory watch stopped it (the caller reports
// the memory error).
func (r *run) settle(v goja.Value) (goja.Value, error) {
	p, ok := v.Export().(*goja.Promise)
	if !ok {
		return v, nil
	}
	switch p.State() {
	case goja.PromiseStateFulfilled:
		return p.Result(), nil
	case goja.PromiseStateRejected:
		return nil, &rejection{p.Result()}
	}
	if r.memHit != nil {
		// A memory stop the watch is about to give is the truer cause:
		// wait for it a moment (its checks are a millisecond apart).
		t := time.NewTimer(memGrace)
		defer t.Stop()
		select {
		case <-r.memHit:
			return nil, nil
		case <-r.ctx.Done():
		case <-t.C:
		}
	}
	if r.ctx.Err() != nil {
		return nil, &pending{ctxErr(r.ctx)}
	}
	return nil, &pending{}
}

// memGrace is how long a run whose promise can no longer settle waits
// for a memory stop before it ends.
const memGrace = 50 * time.Millisecond

func (r *run) setup(tools []Tool) error {
	vm := r.vm
	vm.SetMaxCallStackSize(r.opts.MaxStackDepth)
	vm.SetPromiseRejectionTracker(func(p *goja.Promise, op goja.PromiseRejectionOperation) {
		switch op {
		case goja.PromiseRejectionReject:
			if r.unhandled == nil {
				r.unhandled = map[*goja.Promise]int{}
			}
			r.rejected++
			r.unhandled[p] = r.rejected
		case goja.PromiseRejectionHandle:
			delete(r.unhandled, p)
		}
	})
	// Keep the built-ins the bridge relies on before the script can
	// replace them.
	json := vm.Get("JSON").ToObject(vm)
	var ok bool
	if r.stringify, ok = goja.AssertFunction(json.Get("stringify")); !ok {
		return errors.New("no JSON.stringify")
	}
	if r.parse, ok = goja.AssertFunction(json.Get("parse")); !ok {
		return errors.New("no JSON.parse")
	}
	r.errorCtor = vm.Get("Error")
	funcs, err := prelude(vm, json.Get("parse"), json.Get("stringify"))
	if err != nil {
		return err
	}
	r.then, r.catch, r.finally, r.shown = funcs.then, funcs.catch, funcs.finally, funcs.shown
	if err := guard(vm, r.opts.MaxMemory); err != nil {
		return err
	}

	console := vm.NewObject()
	for name, prefix := range map[string]string{"log": "", "info": "", "debug": "", "warn": "warn: ", "error": "error: "} {
		if err := console.Set(name, r.logger(prefix)); err != nil {
			return err
		}
	}
	if err := vm.Set("console", console); err != nil {
		return err
	}
	obj := vm.NewObject()
	for _, t := range tools {
		if t.Name == Name || t.Name == "" || t.Call == nil {
			continue
		}
		if err := obj.Set(t.Name, r.tool(t)); err != nil {
			return err
		}
		r.tools = append(r.tools, t.Name)
	}
	if err := obj.Set(Name, func(goja.FunctionCall) goja.Value {
		panic(r.newError("tools.run_code: run_code cannot be called from inside run_code; call the other tools directly from this script"))
	}); err != nil {
		return err
	}
	if err := vm.GlobalObject().DefineDataProperty(promisedName, funcs.promised, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		return err
	}
	return vm.Set("tools", obj)
}

// A KindError is a tool's error with a kind a script can branch on: the
// Error the script catches has it as its kind property (e.kind ===
// "not_found"). A Tool's Call returns one to say the kind; scrollback's
// own tools give the contract's error kinds.
type KindError struct {
	Err  error
	Kind string
}

func (e *KindError) Error() string { return e.Err.Error() }
func (e *KindError) Unwrap() error { return e.Err }

// errorKind is the kind a KindError in err's chain gives, or "".
func errorKind(err error) string {
	var k *KindError
	if errors.As(err, &k) {
		return k.Kind
	}
	return ""
}

// newError makes a JavaScript Error to throw.
func (r *run) newError(msg string) *goja.Object {
	o, err := r.vm.New(r.errorCtor, r.vm.ToValue(msg))
	if err != nil {
		return r.vm.NewGoError(errors.New(msg))
	}
	return o
}

// throw rethrows an error from a JavaScript call made by native code.
func throw(err error) {
	panic(err) // goja turns a panicking *Exception (or uncatchable error) back into a throw
}

func (r *run) tool(t Tool) func(goja.FunctionCall) goja.Value {
	return func(fc goja.FunctionCall) goja.Value {
		r.res.Calls++
		call := r.res.Calls
		if call > r.opts.MaxCalls {
			r.vm.Interrupt(ErrTooManyCalls)
			return goja.Undefined()
		}
		arg := fc.Argument(0)
		args := json.RawMessage("{}")
		if !goja.IsUndefined(arg) && !goja.IsNull(arg) {
			o, isObj := arg.(*goja.Object)
			if !isObj || o.ClassName() == "Array" || o.ClassName() == "Function" {
				panic(r.vm.NewTypeError("tools.%s takes one object argument, e.g. tools.%s({...}); got %s", t.Name, t.Name, describeValue(arg)))
			}
			s, err := r.stringify(goja.Undefined(), arg)
			if err != nil {
				throw(err)
			}
			args = json.RawMessage(s.String())
		}
		out, err := t.Call(r.ctx, args)
		if err != nil {
			if len(bytes.TrimSpace(out)) > 0 && !r.bridged {
				// A result given with the error (a command that ran,
				// then the run ended): the copies it made are listed
				// still, though the run's context is over.
				applyBridge(context.WithoutCancel(r.ctx), r.opts, &r.res.Retained, call, t.Name, args, out)
			}
			var stop *stopError
			var cause error
			switch {
			case errors.As(err, &stop):
				// The pool says the run is over.
				cause = stop.cause
			case r.ctx.Err() != nil:
				// The run is over (timeout or cancel).
				cause = ctxErr(r.ctx)
			}
			if cause != nil {
				// The pending interrupt ends the script at its next step;
				// if the error thrown here ends it first, scriptError
				// still reports the run's end, not an exception.
				r.vm.Interrupt(cause)
				r.stopped, r.stoppedIn = cause, t.Name
				panic(r.newError("tools." + t.Name + ": " + r.stopMessage()))
			}
			e := r.newError("tools." + t.Name + ": " + strings.TrimPrefix(err.Error(), t.Name+": "))
			if k := errorKind(err); k != "" {
				e.Set("kind", k)
			}
			panic(e)
		}
		if len(bytes.TrimSpace(out)) == 0 {
			out = json.RawMessage("null")
		}
		if !r.bridged {
			applyBridge(r.ctx, r.opts, &r.res.Retained, call, t.Name, args, out)
		}
		text, isString := stringResult(out)
		if isString {
			return r.vm.ToValue(string(text))
		}
		v, err := r.parse(goja.Undefined(), r.vm.ToValue(string(out)))
		if err != nil {
			panic(r.newError("tools." + t.Name + ": the tool returned invalid JSON"))
		}
		r.thenable(v)
		return v
	}
}

// thenable gives an object result a non-enumerable then, catch and
// finally (each unless it has one of its own), unless it has a then of its
// own: awaiting it, or calling .then, gives the object itself.
func (r *run) thenable(v goja.Value) {
	o, ok := v.(*goja.Object)
	if !ok || o.Get("then") != nil {
		return
	}
	_ = o.DefineDataProperty("then", r.then, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	for name, fn := range map[string]goja.Value{"catch": r.catch, "finally": r.finally} {
		if o.Get(name) == nil {
			_ = o.DefineDataProperty(name, fn, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
		}
	}
}

func ctxErr(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), ErrTimeout) {
		return ErrTimeout
	}
	return ErrCanceled
}

func describeValue(v goja.Value) string {
	if o, ok := v.(*goja.Object); ok {
		return "a value of class " + o.ClassName()
	}
	return "a " + v.ExportType().String() + " " + fmt.Sprintf("(%.40s)", v.String())
}

// stringResult returns a nested result's text: the string itself when
// the result is a JSON string (isString), else the JSON.
func stringResult(out json.RawMessage) (text []byte, isString bool) {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) > 0 && trimmed[0] == '"' {
		var s string
		if json.Unmarshal(trimmed, &s) == nil {
			return []byte(s), true
		}
	}
	return out, false
}

// applyBridge applies the bridge rule to one nested result before the
// script receives it: a copy the tool made itself is listed in retained,
// and a result longer than the budget is saved and listed. In a worker
// process the server applies it (Pool), never the worker.
func applyBridge(ctx context.Context, opts Options, retained *[]Ref, call int, tool string, args, out json.RawMessage) {
	text, isString := stringResult(out)
	if trimmed := bytes.TrimSpace(out); !isString && len(trimmed) > 0 && trimmed[0] == '{' && bytes.Contains(out, []byte(`"output_id"`)) {
		var own struct {
			OutputID   string `json:"output_id"`
			TotalBytes int64  `json:"totalBytes"`
			Complete   *bool  `json:"complete"`
		}
		if json.Unmarshal(trimmed, &own) == nil && own.OutputID != "" {
			ref := Ref{Call: call, Tool: tool, OutputID: own.OutputID, TotalBytes: own.TotalBytes, Complete: true,
				Holds: present.HoldsOutput, Command: present.CommandOf(args)}
			if own.Complete != nil {
				ref.Complete = *own.Complete
			}
			*retained = append(*retained, ref)
		}
	}
	if len(text) <= opts.Budget || opts.Save == nil {
		return
	}
	saved, complete := capText(text, opts.CopyCap)
	ref := Ref{Call: call, Tool: tool, TotalBytes: int64(len(saved)), Complete: complete,
		Holds: present.HoldsResult, Command: present.CommandOf(args)}
	id, err := opts.Save(ctx, Copy{Call: call, Tool: tool, Args: args, Text: saved, Complete: complete})
	if err != nil {
		ref.RecoveryError = present.NotSaved(err.Error())
	} else {
		ref.OutputID = id
	}
	*retained = append(*retained, ref)
}

// capText cuts b to at most max bytes at a UTF-8 boundary; complete is
// false when it cut.
func capText(b []byte, max int) (cut []byte, complete bool) {
	if len(b) <= max {
		return b, true
	}
	return b[:utf8x.CutEnd(b, max, false)], false
}

func (r *run) logger(prefix string) func(goja.FunctionCall) goja.Value {
	return func(fc goja.FunctionCall) goja.Value {
		if r.logFull {
			r.logsDropped++
			return goja.Undefined()
		}
		var b strings.Builder
		b.WriteString(prefix)
		for i, a := range fc.Arguments {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(r.format(a))
			if b.Len() > r.opts.MaxLogBytes {
				break
			}
		}
		b.WriteByte('\n')
		r.appendLog(b.String())
		return goja.Undefined()
	}
}

// appendLog adds a line to the logs, cutting at the bound.
func (r *run) appendLog(line string) {
	room := r.opts.MaxLogBytes - r.logs.Len()
	if len(line) <= room {
		r.logs.WriteString(line)
		return
	}
	r.logs.WriteString(utf8x.Cut(line, room))
	r.logFull = true
	r.logsDropped++
}

func (r *run) finishLogs() {
	r.res.Logs = r.logs.String()
	r.res.LogsCut = r.logFull
	if r.logFull {
		if !strings.HasSuffix(r.res.Logs, "\n") {
			r.res.Logs += "\n"
		}
		r.res.Logs += present.ConsoleCut(r.opts.MaxLogBytes, r.logsDropped)
	}
}

// format shows one console argument: strings as themselves, objects as
// JSON, the rest as JavaScript's String() would.
func (r *run) format(v goja.Value) string {
	if v == nil || goja.IsUndefined(v) {
		return "undefined"
	}
	if o, ok := v.(*goja.Object); ok {
		switch o.ClassName() {
		case "Error", "Function":
			return v.String()
		}
		if s, err := r.shown(goja.Undefined(), v); err == nil && !goja.IsUndefined(s) {
			return s.String()
		}
	}
	return v.String()
}

// setValue turns the return value into Result.Value.
func (r *run) setValue(v goja.Value) {
	if goja.IsUndefined(v) {
		return
	}
	var s string
	_, isSym := v.(*goja.Symbol)
	if _, isFn := goja.AssertFunction(v); isFn || isSym {
		kind := "a function"
		if !isFn {
			kind = "a symbol"
		}
		r.res.Error = &Error{Kind: "result", Err: ErrResult,
			Message: "the return value is " + kind + ", which has no JSON form: return what it computes (call it, e.g. return tools.x({...})), as plain data"}
		return
	}
	if isString(v) {
		s = v.String()
	} else {
		j, err := r.shown(goja.Undefined(), v)
		if err != nil {
			e := r.scriptError(err)
			if e.Kind == "exception" {
				e.Kind, e.Err = "result", ErrResult
				e.Message = "the return value cannot be turned into JSON: " + e.Message + "; return plain data (objects, arrays, strings, numbers)"
			}
			r.res.Error = e
			return
		}
		if goja.IsUndefined(j) {
			return // a function or a symbol: nothing to show
		}
		s = j.String()
	}
	r.res.Value, r.res.Complete = capText([]byte(s), r.opts.CopyCap)
}

// isString reports whether v is a string, which a run shows as itself.
// It exports no object: exporting one runs its getters, and one that
// threw panicked out of the run as an internal error instead of failing
// the value's JSON form at the getter's line. (A String object is shown
// as JSON, as it was when it was exported.)
func isString(v goja.Value) bool {
	if _, ok := v.(*goja.Object); ok {
		return false
	}
	_, ok := v.Export().(string)
	return ok
}

// scriptError turns what goja returned into an Error with the script's own
// line and column.
func (r *run) scriptError(err error) *Error {
	msg, stop := jsString(err.Error)
	if stop != nil {
		if intr := (*goja.InterruptedError)(nil); errors.As(stop, &intr) && !errors.As(err, &intr) {
			return r.scriptError(stop) // reading the thrown value ran into the run's end
		}
		msg = "uncaught exception, which cannot be shown: reading it threw another"
	}
	e := &Error{Kind: "exception", Err: ErrThrown, Message: msg}
	var frames []goja.StackFrame
	var at []wrappedPos // where a rejected Error was made, from its stack
	var intr *goja.InterruptedError
	var so *goja.StackOverflowError
	var ex *goja.Exception
	var rej *rejection
	var pend *pending
	switch {
	case errors.As(err, &rej):
		m, stop := r.thrownMessage(rej.value)
		if errors.As(stop, &intr) {
			return r.scriptError(stop)
		}
		e.Message = m
		if o, ok := rej.value.(*goja.Object); ok {
			st, _ := jsString(func() string {
				if v := o.Get("stack"); v != nil {
					return v.String()
				}
				return ""
			})
			at = stackPositions(st, r.smap)
		}
	case errors.As(err, &pend):
		switch {
		case pend.cause == nil:
			e.Kind, e.Err = "timeout", ErrTimeout
			e.Message = fmt.Sprintf("the script awaited a promise that never settled: nothing was left to run that could settle it (tools answer at once, and there are no timers), so it was stopped at once rather than at its timeout of %s; resolve or reject every promise the script makes", r.opts.Timeout)
		case errors.Is(pend.cause, ErrCanceled):
			e.Kind, e.Err, e.Message = "canceled", ErrCanceled, "the run was canceled by its caller while the script awaited a promise that had not settled"
		default:
			e.Kind, e.Err = "timeout", ErrTimeout
			e.Message = fmt.Sprintf("the script awaited a promise that never settled, and was stopped at its timeout of %s; resolve or reject every promise the script makes", r.opts.Timeout)
		}
	case errors.As(err, &intr):
		frames = intr.Stack()
		cause, _ := intr.Value().(error)
		switch {
		case errors.Is(cause, ErrTimeout):
			e.Kind, e.Err = "timeout", ErrTimeout
			e.Message = fmt.Sprintf("the script ran past its timeout of %s and was stopped; do less per run, or give a larger timeout_ms", r.opts.Timeout)
		case errors.Is(cause, ErrCanceled):
			e.Kind, e.Err, e.Message = "canceled", ErrCanceled, "the run was canceled by its caller"
		case errors.Is(cause, ErrMemory):
			m := r.memoryError()
			e.Kind, e.Err, e.Message = m.Kind, m.Err, m.Message
		case errors.Is(cause, ErrTooManyCalls):
			e.Kind, e.Err = "calls", ErrTooManyCalls
			e.Message = fmt.Sprintf("the script made more than %d tool calls and was stopped; do fewer calls per run", r.opts.MaxCalls)
		default:
			e.Message = fmt.Sprint(intr.Value())
		}
	case errors.As(err, &so):
		frames = so.Stack()
		e.Kind, e.Err = "stack", ErrStack
		e.Message = fmt.Sprintf("RangeError: maximum call stack size exceeded (%d nested calls); the recursion does not end, or goes too deep: use a loop", r.opts.MaxStackDepth)
	case errors.As(err, &ex):
		frames = ex.Stack()
		m, stop := r.thrownMessage(ex.Value())
		if errors.As(stop, &intr) {
			return r.scriptError(stop)
		}
		e.Message = m
	}
	for _, f := range frames {
		if f.SrcName() == scriptName {
			p := f.Position()
			w, _ := r.smap.original(p.Line, p.Column-1) // unmapped: {0, 0}, no line of the script
			at = append(at, w)
		}
	}
	e.Line, e.Column = scriptPosition(at, r.oneLine)
	if e.Line == 0 && ((rej != nil && !isError(rej.value)) || (ex != nil && !isError(ex.Value()))) {
		e.Message += " (a thrown value that is not an Error has no line: throw new Error(...) to get one)"
	}
	if m := noMember().FindStringSubmatch(e.Message); m != nil && strings.Contains(r.code, "tools."+m[1]) {
		// goja's words for calling tools.x when there is no tool x.
		e.Message = present.Clip("TypeError: tools has no tool "+m[1]+"; the tools are "+strings.Join(r.tools, ", "), 1024)
	}
	if m := notDefined().FindStringSubmatch(e.Message); m != nil && missingGlobals[m[1]] != "" {
		e.Message += ": " + missingGlobals[m[1]]
	}
	if e.Kind == "exception" {
		for _, t := range r.tools {
			if !identifier().MatchString(t) && strings.Contains(r.code, "tools."+t) {
				// tools.a-b reads as tools.a - b.
				e.Message += fmt.Sprintf("; tools.%s reads as a subtraction: write tools[%q](...)", t, t)
				break
			}
		}
	}
	if r.stopped != nil && e.Kind == "exception" {
		// The error a tool call threw when the run ended under it: the
		// run's end is the cause, at the call's line.
		e.Kind, e.Err, e.Message = "timeout", ErrTimeout, r.stopMessage()
		if errors.Is(r.stopped, ErrCanceled) {
			e.Kind, e.Err = "canceled", ErrCanceled
		}
	}
	return e
}

// noMember is goja's TypeError for calling a member an object lacks.
// It is compiled on first use, not at start-up.
var noMember = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^TypeError: Object has no member '([\p{L}\p{N}_$]+)'$`)
})

// notDefined is goja's ReferenceError for a name nothing declares.
var notDefined = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^ReferenceError: ([\p{L}\p{N}_$]+) is not defined$`)
})

// missingGlobals says, for the globals a script reaches for that Code
// Mode does not have, what to do instead.
var missingGlobals = map[string]string{
	"require":       "Code Mode has no modules; call the tools as tools.NAME(...) and write the rest in the script",
	"fetch":         "Code Mode has no network access of its own; call a tool that has it, as tools.NAME(...)",
	"setTimeout":    noTimers,
	"setInterval":   noTimers,
	"setImmediate":  noTimers,
	"clearTimeout":  noTimers,
	"clearInterval": noTimers,
}

const noTimers = "Code Mode has no timers (tools answer at once, so there is nothing to wait for); call the function directly"

// stopMessage says that the run ended while a tool call was under way.
func (r *run) stopMessage() string {
	if errors.Is(r.stopped, ErrCanceled) {
		return "the run was canceled by its caller while tools." + r.stoppedIn + " was running"
	}
	return fmt.Sprintf("the script ran past its timeout of %s while tools.%s was running, and was stopped; do less per run, give a larger timeout_ms, or give the call a shorter timeout of its own", r.opts.Timeout, r.stoppedIn)
}

// memoryError is the error of a run the memory watch stopped.
func (r *run) memoryError() *Error {
	return &Error{Kind: "memory", Err: ErrMemory,
		Message: fmt.Sprintf("memory limit exceeded: the script grew the heap by more than %d MiB and was stopped; keep less in memory (slice or filter results as you go)", r.opts.MaxMemory>>20)}
}

func (r *run) thrownMessage(v goja.Value) (string, error) {
	if v == nil {
		return "uncaught exception", nil
	}
	if o, ok := v.(*goja.Object); ok && o.ClassName() == "Error" {
		s, err := jsString(v.String)
		if err != nil {
			return "uncaught Error, which cannot be shown: reading its message threw another error", err
		}
		return s, nil
	}
	// Any other value, quoted as JSON: a thrown "boom" is not read as a
	// message of the run's own.
	if s, err := r.shown(goja.Undefined(), v); err == nil && !goja.IsUndefined(s) {
		return "uncaught " + s.String(), nil
	} else if errors.As(err, new(*goja.InterruptedError)) {
		return "", err
	}
	s, err := jsString(v.String)
	if err != nil {
		return "uncaught value, which cannot be shown: turning it into text threw an error", err
	}
	return "uncaught " + s, nil
}

// jsString calls f, which turns a value of the script's into text (a
// toString, a getter, a proxy's trap may run), so that what it throws,
// or the run's end stopping it, is returned as an error rather than
// panicking out of the run as an internal error.
func jsString(f func() string) (s string, err error) {
	defer func() {
		switch x := recover().(type) {
		case nil:
		case *goja.Exception:
			s, err = "", x
		case *goja.InterruptedError:
			s, err = "", x
		default:
			panic(x)
		}
	}()
	return f(), nil
}

// isError reports whether a thrown value is an Error (which carries its
// position in its stack).
func isError(v goja.Value) bool {
	o, ok := v.(*goja.Object)
	return ok && o.ClassName() == "Error"
}
