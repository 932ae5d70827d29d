package codemode

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/scrollback-dev/scrollback/codemode/internal/sandbox"
)

// The protocol between a Pool and its workers, over the worker's standard
// input and output. Each message is one frame: two big-endian uint32
// lengths (the header's, the body's), a JSON header, then the body as raw
// bytes, so that a large payload (a script, a tool's result) is never
// escaped into JSON. What goes where:
//
//	worker → pool   hello   {pid, layers}                          -
//	pool → worker   run     {opts, tools}                          the code
//	worker → pool   call    {tool}                                 the arguments (JSON)
//	pool → worker   result  {error, stop}                          the result (JSON)
//	worker → pool   done    {complete, undefined, logs, logs_cut, error, calls}  the value
//
// or, for a jq filter (query.go), after hello:
//
//	pool → worker   query   {query}                                the copy
//	worker → pool   done    {query_done}                           the results
//
// The pool applies the bridge rule to each result before it sends it.
type frame struct {
	T string `json:"t"`

	// hello
	PID    int             `json:"pid,omitempty"`
	Layers []sandbox.Layer `json:"layers,omitempty"`

	// run
	Opts  *wireOptions `json:"opts,omitempty"`
	Tools []string     `json:"tools,omitempty"`

	// call
	Tool string `json:"tool,omitempty"`

	// result: Err is the tool's error message and ErrKind its kind (see
	// KindError); Stop, when the run is over (timeout or canceled), tells
	// the worker to stop the script.
	Err     string `json:"err,omitempty"`
	ErrKind string `json:"err_kind,omitempty"`
	Stop    string `json:"stop,omitempty"`

	// query (query.go): the filter and its options; the body is the copy
	Query *wireQuery `json:"query,omitempty"`
	// done of a query: its outcome; the body is the results
	QueryDone *wireQueryDone `json:"query_done,omitempty"`

	// done
	Complete  bool   `json:"complete,omitempty"`
	Undefined bool   `json:"undefined,omitempty"` // the script returned nothing
	Logs      string `json:"logs,omitempty"`
	LogsCut   bool   `json:"logs_cut,omitempty"`
	Error     *Error `json:"error,omitempty"`
	Calls     int    `json:"calls,omitempty"`
}

// wireOptions are the Options a worker needs (no Save: the pool saves).
type wireOptions struct {
	Timeout       time.Duration `json:"timeout"`
	CopyCap       int           `json:"copy_cap"`
	MaxCalls      int           `json:"max_calls"`
	MaxLogBytes   int           `json:"max_log_bytes"`
	MaxMemory     int64         `json:"max_memory"`
	MaxStackDepth int           `json:"max_stack_depth"`
}

// Frame size limits. A worker's frames are bounded: a header holds at most
// the logs and an error message, a body the value (cut at the copy cap)
// or a tool's arguments. The pool refuses anything larger, so that a
// runaway worker cannot grow the server.
const (
	maxHeader    = 1 << 20
	maxArgsBytes = 8 << 20 // most bytes of one tool call's arguments
	maxBody      = 16 << 20
)

var errFrameSize = errors.New("codemode: frame over the size limit")

// writeFrame writes one frame and flushes it.
func writeFrame(w *bufio.Writer, f *frame, body []byte) error {
	h, err := json.Marshal(f)
	if err != nil {
		return err
	}
	var lens [8]byte
	binary.BigEndian.PutUint32(lens[:4], uint32(len(h)))
	binary.BigEndian.PutUint32(lens[4:], uint32(len(body)))
	w.Write(lens[:])
	w.Write(h)
	w.Write(body)
	return w.Flush()
}

// readFrame reads one frame, refusing a header over maxHeader or a body
// over bodyMax.
func readFrame(r *bufio.Reader, bodyMax int) (*frame, []byte, error) {
	var lens [8]byte
	if _, err := io.ReadFull(r, lens[:]); err != nil {
		return nil, nil, err
	}
	hn, bn := binary.BigEndian.Uint32(lens[:4]), binary.BigEndian.Uint32(lens[4:])
	if hn > maxHeader || int64(bn) > int64(bodyMax) {
		return nil, nil, fmt.Errorf("%w: header %d bytes, body %d bytes", errFrameSize, hn, bn)
	}
	buf := make([]byte, int(hn)+int(bn))
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, nil, err
	}
	var f frame
	if err := json.Unmarshal(buf[:hn], &f); err != nil {
		return nil, nil, fmt.Errorf("codemode: bad frame header: %w", err)
	}
	return &f, buf[hn:], nil
}
