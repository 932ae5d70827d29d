package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback/mcpserver"
)

// serveStdio serves srv on the command's stdin and stdout until the client
// closes stdin or ctx ends. A client that writes its requests and closes
// stdin at once (printf ... | scrollback mcp) still gets every answer: at
// end of input the server first answers the requests it has read. A line
// that is not a JSON-RPC message gets its error and the server goes on.
//
// When ctx ends (a signal), the calls in flight are told to stop (see
// stopCallsWith) and their answers go out, within stopGrace, before the
// server ends.
func serveStdio(ctx context.Context, srv *mcp.Server, std IO) error {
	var b balance
	b.cond = sync.NewCond(&b.mu)
	runCtx, endRun := context.WithCancel(context.WithoutCancel(ctx))
	defer endRun()
	stop := context.AfterFunc(ctx, func() {
		grace, cancel := context.WithTimeout(runCtx, stopGrace)
		defer cancel()
		b.settle(grace)
		endRun()
	})
	defer stop()
	ctx = runCtx
	stdout := &lockedWriter{w: std.Stdout}
	listens := &idSet{}
	in := &countingReader{r: newGuardReader(std.Stdin, stdout, mcp.DefaultMaxLineLength), b: &b, l: lines{listens: listens}}
	out := &countingWriter{w: stdout, b: &b, l: lines{listens: listens}}
	err := srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil // the client closed stdin, or we were told to stop
	}
	return err
}

// stopGrace bounds how long a stdio server told to stop waits for the
// answers of the calls it stopped: long enough to save their copies.
const stopGrace = 10 * time.Second

// balance counts the requests read and the responses written.
type balance struct {
	mu                  sync.Mutex
	cond                *sync.Cond
	requests, responses int
	cancelled           bool
}

func (b *balance) cancel() {
	b.mu.Lock()
	b.cancelled = true
	b.cond.Broadcast()
	b.mu.Unlock()
}

func (b *balance) add(requests, responses int) {
	if requests == 0 && responses == 0 {
		return
	}
	b.mu.Lock()
	b.requests += requests
	b.responses += responses
	b.cond.Broadcast()
	b.mu.Unlock()
}

// settle is wait, giving up when ctx ends.
func (b *balance) settle(ctx context.Context) {
	defer context.AfterFunc(ctx, b.cancel)()
	b.wait()
}

// wait blocks until every request read has been answered, or the server
// is told to stop.
func (b *balance) wait() {
	b.mu.Lock()
	for b.responses < b.requests && !b.cancelled {
		b.cond.Wait()
	}
	b.mu.Unlock()
}

// lines splits a stream of newline-delimited JSON-RPC messages and counts
// the requests (an id and a method, but for subscriptions/listen, which is
// answered only when the session ends) and the responses (an id, no
// method; or a cancellation, after which no response comes).
type lines struct {
	partial []byte
	listens *idSet // the ids of subscriptions/listen requests, shared by both directions
}

// idSet is a set of JSON-RPC ids, safe for concurrent use.
type idSet struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (s *idSet) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ids == nil {
		s.ids = map[string]bool{}
	}
	s.ids[id] = true
}

// take removes id and reports whether it was there.
func (s *idSet) take(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok := s.ids[id]
	delete(s.ids, id)
	return ok
}

// maxLine bounds the bytes kept of a message not yet ended by a newline;
// a longer one is counted as whatever its first bytes say.
const maxLine = 32 << 20

func (l *lines) feed(p []byte) (requests, responses int) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(l.partial) < maxLine {
				l.partial = append(l.partial, p[:min(len(p), maxLine-len(l.partial))]...)
			}
			return
		}
		line := p[:i]
		if len(l.partial) > 0 {
			line = append(l.partial, line...)
			l.partial = l.partial[:0]
		}
		p = p[i+1:]
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		if m.Method != "notifications/cancelled" && (len(m.ID) == 0 || string(m.ID) == "null") {
			continue // a notification: nothing answers it
		}
		switch m.Method {
		case "":
			if !l.listens.take(string(m.ID)) {
				responses++
			}
		case "notifications/cancelled":
			// A cancelled request gets no answer: count it as answered.
			responses++
		case "subscriptions/listen":
			// A stream of notifications that may stay open until the
			// client goes: its answer can come only at the end, so
			// waiting for it at end of input would keep the server, and
			// its code workers, running after a client that died (a
			// proxy killed with its upstream left behind). Neither it
			// nor its answer is counted.
			l.listens.add(string(m.ID))
		default:
			requests++
		}
	}
	return
}

// countingReader counts the requests the client sends and, at end of
// input, holds the end back until all of them are answered.
type countingReader struct {
	r io.Reader
	b *balance
	l lines
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	req, _ := c.l.feed(p[:n])
	c.b.add(req, 0)
	if errors.Is(err, io.EOF) {
		c.b.wait()
	}
	return n, err
}

// countingWriter counts the responses the server writes.
type countingWriter struct {
	w io.Writer
	b *balance
	l lines
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	_, resp := c.l.feed(p[:n])
	c.b.add(0, resp)
	return n, err
}

// lockedWriter writes whole messages, one at a time: the server's answers
// and the guard's errors share stdout.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// guardReader passes on, one a line, only the lines of r that are JSON-RPC
// messages the SDK can take, and answers every other line itself, as
// JSON-RPC says, so that one bad line does not end the session: a line
// that is not UTF-8 JSON (or is longer than max bytes) gets a parse error
// (-32700, id null); JSON that is not a message, or a batch, gets an
// invalid request error (-32600). Blank lines (JSON whitespace only, of
// any length) are skipped. Memory stays within max whatever the line's
// length: the rest of a longer line is read and dropped.
type guardReader struct {
	r       *bufio.Reader
	answer  io.Writer
	max     int
	line    []byte
	pending []byte
	err     error
}

func newGuardReader(r io.Reader, answer io.Writer, max int) *guardReader {
	return &guardReader{r: bufio.NewReaderSize(r, 64<<10), answer: answer, max: max}
}

func (g *guardReader) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			return 0, g.err
		}
		line, over, blank, err := g.readLine()
		g.err = err
		if blank {
			continue
		}
		if over > 0 {
			g.reply(nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: a line of %d bytes, over the limit of %d bytes a message; the line was dropped", over, g.max))
			continue
		}
		if id, code, msg := checkLine(line); code != 0 {
			g.reply(id, code, msg)
			continue
		}
		g.pending = append(line, '\n')
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

func (g *guardReader) reply(id json.RawMessage, code int64, msg string) {
	g.answer.Write(append(mcpserver.RPCError(id, code, msg), '\n'))
}

// readLine reads one line, without its newline, into g.line. When the
// line is longer than g.max it returns how many bytes it read of it
// instead, having dropped them. blank says the line held only JSON
// whitespace, whatever its length.
func (g *guardReader) readLine() (line []byte, over int, blank bool, err error) {
	g.line = g.line[:0]
	n := 0 // bytes of the line read, its newline included
	dropping := false
	blank = true
	for {
		chunk, err := g.r.ReadSlice('\n')
		n += len(chunk)
		blank = blank && isJSONSpace(chunk)
		if !dropping && n > g.max+1 {
			dropping = true
			if cap(g.line) > 1<<20 {
				g.line = nil // give a large buffer back
			}
		}
		if !dropping {
			g.line = append(g.line, chunk...)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if dropping {
			if bytes.HasSuffix(chunk, []byte("\n")) {
				n--
			}
			return nil, n, blank, err
		}
		return bytes.TrimSuffix(g.line, []byte("\n")), 0, blank, err
	}
}

// jsonSpace is the whitespace JSON allows between tokens (RFC 8259 §2).
const jsonSpace = " \t\r\n"

// isJSONSpace says b holds only JSON whitespace.
func isJSONSpace(b []byte) bool {
	return len(bytes.Trim(b, jsonSpace)) == 0
}

// checkLine says what keeps line from being a JSON-RPC message the server
// can take: the error's code and message, and the id to answer when the
// line has one. code 0: nothing.
func checkLine(line []byte) (id json.RawMessage, code int64, msg string) {
	t := bytes.Trim(line, jsonSpace)
	if len(t) == 0 {
		return nil, 0, ""
	}
	if problem := mcpserver.ParseProblem(t); problem != "" {
		return nil, jsonrpc.CodeParseError, problem
	}
	if t[0] != '{' {
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: a message is one JSON object per line (batches are not supported)"
	}
	if _, err := jsonrpc.DecodeMessage(t); err != nil {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(t, &m)
		if len(m.ID) > 0 && m.ID[0] != '"' && m.ID[0] != '-' && (m.ID[0] < '0' || m.ID[0] > '9') {
			m.ID = nil
		}
		return m.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: %v; send a JSON-RPC 2.0 request, notification or response", err)
	}
	return nil, 0, ""
}
