package jsonq

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/itchyny/gojq"

	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/internal/utf8x"
	"github.com/scrollback-dev/scrollback/present"
)

// Defaults of Options.
const (
	// DefaultTimeout is how long a filter may run.
	DefaultTimeout = 5 * time.Second
	// DefaultMaxOutput bounds the results: the copy cap, results as large
	// as the copy itself.
	DefaultMaxOutput = 8 << 20
	// DefaultMaxMemory is how far the heap may grow during a run: room for
	// an 8 MiB document's decoded values many times over.
	DefaultMaxMemory = 512 << 20
)

// Sentinel errors, wrapped by the *Error that Compile and Run return.
var (
	// ErrFilter: the filter does not parse or compile, or calls a builtin
	// that would read outside the copy.
	ErrFilter = errors.New("jsonq: invalid filter")
	// ErrSyntax: the copy is not JSON (or exceeds MaxDepth or
	// MaxNumberLen); Error.Offset and Error.Line say where.
	ErrSyntax = errors.New("jsonq: the copy is not valid JSON")
	// ErrCut: an incomplete copy is one document that ends before it does,
	// or whose middle a cap dropped.
	ErrCut = errors.New("jsonq: the copy is a JSON document cut short")
	// ErrRuntime: the filter raised an error, or a result cannot be
	// written (nesting deeper than MaxDepth).
	ErrRuntime = errors.New("jsonq: the filter failed")
	// ErrTimeLimit: the filter ran past Options.Timeout.
	ErrTimeLimit = errors.New("jsonq: the filter ran past the time limit")
	// ErrOutputLimit: the results passed Options.MaxOutput bytes.
	ErrOutputLimit = errors.New("jsonq: the results passed the output limit")
	// ErrMemoryLimit: the heap grew past Options.MaxMemory during the run.
	ErrMemoryLimit = errors.New("jsonq: the filter passed the memory limit")
)

// Error is a failure to compile or run a filter, with what would be right.
type Error struct {
	Err  error  // one of the sentinel errors
	Msg  string // what went wrong
	Hint string // what would be right; may be empty
	// Offset and Line locate a syntax error in the copy (Line counts from
	// 1); both are 0 for other errors.
	Offset, Line int64
}

func (e *Error) Error() string {
	if e.Hint == "" {
		return e.Msg
	}
	return e.Msg + "; " + e.Hint
}

func (e *Error) Unwrap() error { return e.Err }

// Filter is a compiled jq filter. It is safe for concurrent use.
type Filter struct {
	src  string
	code *gojq.Code
}

// String returns the filter as written.
func (f *Filter) String() string { return f.src }

// denied are the builtins that would read something other than the copy.
var denied = map[string]bool{"input": true, "inputs": true, "env": true, "$ENV": true}

// Compile parses and compiles a jq filter. A syntax error names its
// position (byte offset, line and column in the filter) and jq's message;
// a filter that calls input, inputs, env or $ENV is refused.
func Compile(src string) (*Filter, error) {
	if strings.TrimSpace(src) == "" {
		return nil, &Error{Err: ErrFilter, Msg: "the filter is empty", Hint: `pass a jq filter, e.g. "." or ".items | length"`}
	}
	q, err := gojq.Parse(src)
	if err != nil {
		var pe *gojq.ParseError
		if errors.As(err, &pe) {
			line, col := position(src, pe.Offset)
			return nil, &Error{Err: ErrFilter,
				Msg:  fmt.Sprintf("the filter is not valid jq: %s at byte %d (line %d, column %d)", pe.Error(), pe.Offset, line, col),
				Hint: "check the brackets, quotes and pipes near there; jq syntax is described at https://jqlang.org/manual/"}
		}
		return nil, &Error{Err: ErrFilter, Msg: "the filter is not valid jq: " + err.Error()}
	}
	if name := deniedCall(reflect.ValueOf(q)); name != "" {
		return nil, &Error{Err: ErrFilter, Msg: "the filter uses " + name + ", which is not available",
			Hint: "a filter reads only the retained copy, given as its input (.); input, inputs, env and $ENV are refused"}
	}
	code, err := gojq.Compile(q)
	if err != nil {
		return nil, &Error{Err: ErrFilter, Msg: "the filter does not compile: " + err.Error(),
			Hint: "check the names of functions and variables; the filter language is gojq, which has jq's builtins but not keys_unsorted (keys gives them sorted), input_line_number, $__loc__ or modules"}
	}
	return &Filter{src: src, code: code}, nil
}

// position is the 1-based line and column (in bytes) of offset off in s.
// gojq reports the offset after the token it stopped at.
func position(s string, off int) (line, col int) {
	off = min(max(off, 0), len(s))
	before := s[:off]
	line = strings.Count(before, "\n") + 1
	return line, off - strings.LastIndexByte(before, '\n')
}

// deniedCall walks the parsed filter for a call of a denied builtin and
// returns its name, or "". gojq's syntax tree has many node types; walking
// it by reflection finds every *gojq.Func wherever it sits.
func deniedCall(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ""
		}
		if f, ok := v.Interface().(*gojq.Func); ok && denied[f.Name] {
			return f.Name
		}
		// {$ENV} is object shorthand for {ENV: $ENV}: the variable stands
		// in the key, not in a Func.
		if kv, ok := v.Interface().(*gojq.ObjectKeyVal); ok && denied[kv.Key] {
			return kv.Key
		}
		return deniedCall(v.Elem())
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				if n := deniedCall(v.Field(i)); n != "" {
					return n
				}
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if n := deniedCall(v.Index(i)); n != "" {
				return n
			}
		}
	}
	return ""
}

// Options bounds a run. The zero value gives the defaults.
type Options struct {
	// Timeout stops the filter; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxOutput is the most bytes of results; 0 means DefaultMaxOutput.
	MaxOutput int
	// MaxMemory is how many bytes the heap may grow while the filter runs
	// before it is stopped; 0 means DefaultMaxMemory, < 0 no limit. The
	// heap is the process's: concurrent work counts too, so the limit is a
	// guard against runaway filters, not an accounting.
	MaxMemory int64
	// Complete tells whether the copy holds everything the tool produced.
	// When it does not, a stream that stops parsing after a whole document
	// is filtered as far as it goes, and one document cut short is ErrCut.
	Complete bool
}

// Result is what a run produced.
type Result struct {
	// Text is the results, compact JSON, each followed by "\n".
	Text []byte
	// Results counts them; Documents counts the documents filtered.
	Results, Documents int
	// Stopped is -1 when the whole copy was read; else the offset where
	// parsing of an incomplete copy stopped, the rest left unfiltered.
	Stopped int64
	// StopReason says why parsing stopped there ("" when Stopped is -1).
	StopReason string
	// Gaps are the places where a cap dropped part of a stream of
	// documents (JSON Lines) and filtering went on after the gap.
	Gaps []Gap
}

// Gap is a place in a stream of documents where a cap dropped bytes and
// Run went on with the documents kept after it.
type Gap struct {
	// Offset is where the marker line that stands for the dropped bytes
	// starts; Marker is what it says.
	Offset int64
	Marker capture.Marker
	// Before counts the documents filtered before the gap.
	Before int
	// Resumed is where filtering went on; Skipped is how many bytes before
	// it, after the marker line, were passed over: the rest of a line the
	// cut may have begun inside (0 when the line after the marker is a
	// whole document).
	Resumed, Skipped int64
}

// Run filters the copy of size bytes that r holds. See the package doc
// for how it reads the copy and what it refuses.
func Run(ctx context.Context, f *Filter, r io.ReaderAt, size int64, opts Options) (res *Result, err error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	maxOut := opts.MaxOutput
	if maxOut <= 0 {
		maxOut = DefaultMaxOutput
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, ErrTimeLimit)
	defer cancel()
	maxMem := opts.MaxMemory
	if maxMem == 0 {
		maxMem = DefaultMaxMemory
	}
	ctx, cancelMem := context.WithCancelCause(ctx)
	defer cancelMem(nil)
	if maxMem > 0 {
		defer watchMemory(uint64(maxMem), func() { cancelMem(ErrMemoryLimit) })()
	}
	defer func() {
		// gojq is not meant to panic; if it does on some input, that is
		// one failed query, not a crashed server.
		if v := recover(); v != nil {
			res, err = nil, &Error{Err: ErrRuntime, Msg: fmt.Sprintf("the jq engine failed on this filter and input: %v", v)}
		}
	}()

	res = &Result{Stopped: -1}
	var out bytes.Buffer
	p := newParser(r, size)
	for {
		more, err := p.more()
		if err != nil {
			return nil, readError(err)
		}
		if !more {
			break
		}
		if ctx.Err() != nil {
			return nil, stopped(ctx, timeout, maxMem)
		}
		start := p.offset()
		v, err := p.value()
		if err != nil {
			var se *syntaxError
			if !errors.As(err, &se) {
				return nil, readError(err)
			}
			if !opts.Complete && res.Documents > 0 {
				at, m, ok := markerNear(r, size, se.offset)
				if ok {
					// JSON Lines go on after the gap, from the first line
					// that is surely a whole document.
					if next, skipped, ok := resumeAfter(r, size, at); ok {
						res.Gaps = append(res.Gaps, Gap{Offset: at, Marker: m, Before: res.Documents, Resumed: next, Skipped: skipped})
						p = newParserAt(r, size, next)
						continue
					}
				}
				res.Stopped = start
				res.StopReason = se.msg
				if ok {
					res.StopReason = fmt.Sprintf("the %s cap was crossed there and %s (%s) were dropped", m.Cap, present.Plural(m.Bytes, "byte"), present.GapLines(m.Lines))
				}
				break
			}
			if !opts.Complete {
				if at, m, ok := markerNear(r, size, se.offset); ok {
					return nil, cutAtCap(r, at, m)
				}
			}
			return nil, copyError(r, size, se, opts.Complete, res.Documents)
		}
		res.Documents++
		if err := filterOne(ctx, f, v, &out, maxOut, timeout, maxMem, res); err != nil {
			return nil, err
		}
	}
	res.Text = out.Bytes()
	return res, nil
}

// filterOne runs f on one document, appending its results to out.
func filterOne(ctx context.Context, f *Filter, v any, out *bytes.Buffer, maxOut int, timeout time.Duration, maxMem int64, res *Result) error {
	iter := f.code.RunWithContext(ctx, v)
	for {
		if err := ctx.Err(); err != nil {
			return stopped(ctx, timeout, maxMem)
		}
		v, ok := iter.Next()
		if !ok {
			return nil
		}
		if err, ok := v.(error); ok {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				return nil // halt: stop quietly, as jq does
			}
			if ctx.Err() != nil {
				return stopped(ctx, timeout, maxMem)
			}
			return raised(err)
		}
		if deeper(v, MaxDepth) {
			return &Error{Err: ErrRuntime, Msg: fmt.Sprintf("a result nests deeper than %d levels", MaxDepth),
				Hint: "select a part of it instead"}
		}
		b, err := gojq.Marshal(v)
		if err != nil {
			return &Error{Err: ErrRuntime, Msg: "a result cannot be written as JSON: " + err.Error()}
		}
		if out.Len()+len(b)+1 > maxOut {
			return &Error{Err: ErrOutputLimit,
				Msg:  fmt.Sprintf("the results passed the output limit (%d bytes) after %d results, so the filter was stopped", maxOut, res.Results),
				Hint: "narrow the filter: select fewer fields, or take a few results with limit(n; ...) or first(...)"}
		}
		out.Write(b)
		out.WriteByte('\n')
		res.Results++
	}
}

// maxRaised bounds the part of a runtime error's message that gojq wrote:
// error(.) of an 8 MiB document must not come back as an 8 MiB message.
const maxRaised = 1 << 10

// raised is the error for err, which the filter raised while running:
// gojq's message cut to maxRaised bytes (present.Clip, which marks the
// cut), with a hint that fits where it came from.
func raised(err error) *Error {
	hint := `guard steps that may not apply, e.g. .items[]? or select(type == "object")`
	var ve gojq.ValueError
	var halt *gojq.HaltError
	if errors.As(err, &ve) && !errors.As(err, &halt) {
		// error(...) in the filter: catchable, unlike halt_error.
		hint = "the filter raised it with error(...); try ... catch handles it, e.g. try (...) catch null"
	}
	return &Error{Err: ErrRuntime, Msg: "the filter failed: " + present.Clip(err.Error(), maxRaised), Hint: hint}
}

func stopped(ctx context.Context, timeout time.Duration, maxMem int64) error {
	for _, limit := range []error{ErrMemoryLimit, ErrTimeLimit} {
		if errors.Is(context.Cause(ctx), limit) {
			return LimitError(limit, timeout, maxMem)
		}
	}
	return ctx.Err()
}

// LimitError is the error of a filter stopped at a limit: limit is
// ErrMemoryLimit (maxMem bytes) or ErrTimeLimit (timeout). Run returns
// it; a caller that runs filters in another process (codemode.Pool)
// makes the same error of a process killed at the limit.
func LimitError(limit error, timeout time.Duration, maxMem int64) *Error {
	if limit == ErrMemoryLimit {
		return &Error{Err: ErrMemoryLimit, Msg: fmt.Sprintf("the filter grew memory past the limit (%d MiB) and was stopped", maxMem>>20),
			Hint: "avoid collecting large arrays ([...], group_by, sort over everything); stream results with .[] and select, or take a few with limit(n; ...)"}
	}
	return &Error{Err: ErrTimeLimit, Msg: fmt.Sprintf("the filter ran past the time limit (%s) and was stopped", timeout),
		Hint: "a filter that never ends (repeat, range over a huge count) must be bounded, e.g. with limit(n; ...) or first(...)"}
}

// deeper reports whether v nests arrays and objects deeper than max.
func deeper(v any, max int) bool {
	switch v := v.(type) {
	case []any:
		if max == 0 {
			return true
		}
		for _, e := range v {
			if deeper(e, max-1) {
				return true
			}
		}
	case map[string]any:
		if max == 0 {
			return true
		}
		for _, e := range v {
			if deeper(e, max-1) {
				return true
			}
		}
	}
	return false
}

func readError(err error) error {
	return fmt.Errorf("jsonq: reading the copy: %w", err)
}

// copyError describes where and why the copy stopped parsing: offset,
// line and the bytes there.
func copyError(r io.ReaderAt, size int64, se *syntaxError, complete bool, docs int) error {
	line := lineAt(r, se.offset)
	if se.eof && !complete {
		return &Error{Err: ErrCut, Offset: se.offset, Line: line,
			Msg:  fmt.Sprintf("the copy is one JSON document cut at the cap: it ends at byte %d (line %d) inside the document, so it cannot be queried whole", se.offset, line),
			Hint: "read or search the part that was kept, or re-run the tool with its own filters so that its output fits"}
	}
	what := "the end of the copy"
	if se.offset < size {
		var buf [24]byte
		n, _ := r.ReadAt(buf[:min(int64(len(buf)), size-se.offset)], se.offset)
		what = strconv.Quote(utf8x.ValidString(buf[:utf8x.CutEnd(buf[:n], n, se.offset+int64(n) == size)]))
	}
	msg := fmt.Sprintf("the copy is not valid JSON: parsing stopped at byte %d (line %d): %s; the copy there reads %s", se.offset, line, se.msg, what)
	if docs > 0 {
		msg += fmt.Sprintf(" (after %d whole documents)", docs)
	}
	return &Error{Err: ErrSyntax, Offset: se.offset, Line: line, Msg: msg,
		Hint: "a query reads one JSON document or JSON Lines; read or search other text instead"}
}

// markerSearch is how far past where parsing stopped the marker line of a
// cut copy may start: the head is cut at a line end or a character
// boundary, so parsing stops at the marker or a few bytes before it (in a
// literal or a number the head cut short).
const markerSearch = 96

// markerNear finds the marker line capture puts where it dropped the
// middle of an output (capture.ParseMarker), starting at a line start
// near off, where parsing of an incomplete copy stopped. It returns the
// marker's offset and what it says.
func markerNear(r io.ReaderAt, size, off int64) (int64, capture.Marker, bool) {
	from := max(off-2, 0)
	buf := make([]byte, min(size-from, off-from+markerSearch+int64(capture.MaxMarkerLen)))
	n, _ := r.ReadAt(buf, from)
	buf = buf[:n]
	for i := 0; i <= min(len(buf), int(off-from)+markerSearch); {
		k := bytes.Index(buf[i:], []byte(capture.MarkerPrefix))
		if k < 0 || i+k > int(off-from)+markerSearch {
			break
		}
		at := i + k
		i = at + 1
		if from+int64(at) > 0 && (at == 0 || buf[at-1] != '\n') {
			continue
		}
		line := buf[at:]
		if end := bytes.IndexByte(line, '\n'); end >= 0 {
			line = line[:end]
		} else if from+int64(len(buf)) < size {
			continue // longer than any marker
		}
		if m, ok := capture.ParseMarker(line); ok {
			return from + int64(at), m, true
		}
	}
	return 0, capture.Marker{}, false
}

// resumeAfter finds where the documents kept after the marker line at
// offset at go on, when they are JSON Lines: the line after the marker,
// when it is one whole object or array (the tail of a cut copy starts at
// a line start unless the line is long, and what is left of a cut object
// or array is never one), else the line after that, which surely starts
// a line of the output, when it is one whole value. It returns that
// offset and how many bytes after the marker line it passes over; false
// when neither line is one whole document (an indented document, or
// nothing after the gap): the copy is then filtered only up to the gap.
func resumeAfter(r io.ReaderAt, size, at int64) (next, skipped int64, ok bool) {
	first := lineEnd(r, size, at) + 1 // after the marker line
	if first >= size {
		return 0, 0, false
	}
	end := lineEnd(r, size, first)
	if c, ok := wholeLine(r, first, end); ok && (c == '{' || c == '[') {
		return first, 0, true
	}
	second := end + 1
	if second >= size {
		return 0, 0, false
	}
	if _, ok := wholeLine(r, second, lineEnd(r, size, second)); ok {
		return second, second - first, true
	}
	return 0, 0, false
}

// lineEnd is the offset of the first newline at or after from, or size.
func lineEnd(r io.ReaderAt, size, from int64) int64 {
	buf := make([]byte, window)
	for pos := from; pos < size; {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), size-pos)], pos)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i)
		}
		pos += int64(n)
		if err != nil && n == 0 {
			break
		}
	}
	return size
}

// wholeLine reports whether the bytes from..to (a line, without its
// newline) are one JSON value and nothing else but white space, and
// returns the byte the value starts with.
func wholeLine(r io.ReaderAt, from, to int64) (byte, bool) {
	p := newParserAt(io.NewSectionReader(r, from, to-from), to-from, 0)
	c, ok := p.peek()
	if !ok {
		return 0, false
	}
	if _, err := p.value(); err != nil {
		return 0, false
	}
	if more, err := p.more(); more || err != nil {
		return 0, false
	}
	return c, true
}

// cutAtCap is the error for one document whose middle the copy dropped at
// a cap: parsing stopped at the marker line that stands for it, at
// offset at.
func cutAtCap(r io.ReaderAt, at int64, m capture.Marker) error {
	line := lineAt(r, at)
	return &Error{Err: ErrCut, Offset: at, Line: line,
		Msg: fmt.Sprintf("the copy is one JSON document cut at the %s cap: the tool's output passed the cap of %s, so %s (%s) of its middle were dropped at byte %d (line %d), where the copy holds a marker line instead; the copy is incomplete, and a document missing its middle cannot be queried whole",
			m.Cap, present.Plural(m.Limit, "byte"), present.Plural(m.Bytes, "byte"), present.GapLines(m.Lines), at, line),
		Hint: "read or search the start and the end that were kept, or re-run the tool with its own filters so that its output fits"}
}

// lineAt is the 1-based line of offset off.
func lineAt(r io.ReaderAt, off int64) int64 {
	buf := make([]byte, window)
	line := int64(1)
	for pos := int64(0); pos < off; {
		n, err := r.ReadAt(buf[:min(int64(len(buf)), off-pos)], pos)
		line += int64(bytes.Count(buf[:n], []byte{'\n'}))
		pos += int64(n)
		if err != nil || n == 0 {
			break
		}
	}
	return line
}

// gojqMarshal writes v as gojq writes a result.
func gojqMarshal(v any) ([]byte, error) { return gojq.Marshal(v) }

// watchMemory samples the heap every few milliseconds and calls stop once
// it has grown more than limit bytes since the call (after a collection,
// so that garbage is not blamed). It returns the function that ends the
// watch.
func watchMemory(limit uint64, stop func()) (end func()) {
	base := heapBytes()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if h := heapBytes(); h <= base || h-base <= limit {
					continue
				}
				runtime.GC()
				if h := heapBytes(); h > base && h-base > limit {
					stop()
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

var (
	heapMu     sync.Mutex
	heapSample = []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
)

// heapBytes reads the bytes held by heap objects, live or not yet swept.
func heapBytes() uint64 {
	heapMu.Lock()
	defer heapMu.Unlock()
	metrics.Read(heapSample)
	if heapSample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return heapSample[0].Value.Uint64()
}
