package proxy

import (
	"bytes"
	"encoding/json"
	"io"
)

// strayFilter passes on the lines of an upstream's stdout that are
// JSON-RPC messages and drops the others, telling stray about each: a
// banner a server prints with console.log, a JSON log line (pino writes to
// stdout by default), an object as Node prints it. A client made with the
// TypeScript SDK skips such a line and goes on; the Go SDK's reader would
// take it as a broken connection, so without the filter one stray line
// kept the proxy from starting, or failed the call it came during and
// restarted the upstream.
//
// A line is held until its newline while it is at most strayProbe bytes,
// and passed when it is a JSON-RPC message: a JSON object whose "jsonrpc"
// is "2.0", or a JSON array (a batch). A longer line is not held: it is
// passed when it begins with '{' or '[', else dropped, so that memory stays
// bounded and a huge result streams on to the cutReader.
type strayFilter struct {
	r     io.Reader
	stray func(line []byte) // at most strayShow bytes of the line
	// notice, when set, is called for each ordered notification passed
	// (see noticeOrder).
	notice func()
	line   []byte // the line being held
	mode   int
	probe  int // the longest line held
	in     []byte
	out    []byte
	err    error
}

const (
	strayHold = iota // holding the line to look at it whole
	strayPass        // passing the rest of a long line
	strayDrop        // dropping the rest of a long line
)

const (
	strayProbe = 64 << 10
	strayShow  = 200
)

func newStrayFilter(r io.Reader, stray func([]byte)) *strayFilter {
	return &strayFilter{r: r, stray: stray, probe: strayProbe, in: make([]byte, 32<<10)}
}

func (f *strayFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		n, err := f.r.Read(f.in)
		f.out = f.process(f.in[:n], f.out[:0])
		if err != nil {
			f.err = err
			if f.mode == strayHold && len(f.line) > 0 {
				f.out = f.judge(f.out) // the last line, without a newline
			}
		}
		if n == 0 && err == nil {
			return 0, nil
		}
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// process appends what passes of in to out.
func (f *strayFilter) process(in, out []byte) []byte {
	for len(in) > 0 {
		i := bytes.IndexByte(in, '\n')
		end := len(in)
		if i >= 0 {
			end = i + 1
		}
		part := in[:end]
		in = in[end:]
		switch f.mode {
		case strayPass:
			out = append(out, part...)
		case strayDrop:
		case strayHold:
			f.line = append(f.line, part...)
			switch {
			case len(f.line) > f.probe:
				// Too long to hold: judged by its first byte.
				if c := firstByte(f.line[:f.probe+1]); c == '{' || c == '[' {
					out = append(out, f.line...)
					f.mode = strayPass
				} else {
					f.tell(f.line)
					f.mode = strayDrop
				}
				f.line = f.line[:0]
			case i >= 0:
				out = f.judge(out)
			}
			if f.mode == strayHold {
				continue
			}
		}
		if i >= 0 {
			f.mode = strayHold
		}
	}
	return out
}

// judge passes or drops the held line, whole, and starts the next.
func (f *strayFilter) judge(out []byte) []byte {
	switch ok, method := message(f.line); {
	case ok:
		out = append(out, f.line...)
		if ordered(method) && f.notice != nil {
			f.notice()
		}
	case len(bytes.TrimSpace(f.line)) > 0:
		f.tell(f.line)
	}
	f.line = f.line[:0]
	return out
}

func (f *strayFilter) tell(line []byte) {
	if f.stray == nil {
		return
	}
	line = bytes.TrimRight(line, "\r\n")
	if len(line) > strayShow {
		line = line[:strayShow]
	}
	f.stray(line)
}

// firstByte is the first byte of b that is not JSON whitespace, or 0.
func firstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
		default:
			return c
		}
	}
	return 0
}

// isMessage reports whether line is a JSON-RPC message: an object whose
// "jsonrpc" is "2.0", or a JSON array (a batch).
func isMessage(line []byte) bool {
	ok, _ := message(line)
	return ok
}

// message is isMessage, and the method of a message that is an object.
func message(line []byte) (ok bool, method string) {
	switch firstByte(line) {
	case '[':
		return json.Valid(line), ""
	case '{':
		var m struct {
			V      *string `json:"jsonrpc"`
			Method string  `json:"method"`
		}
		ok := json.Unmarshal(line, &m) == nil && m.V != nil && *m.V == "2.0"
		return ok, m.Method
	}
	return false, ""
}
