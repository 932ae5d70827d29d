package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serveStdio serves srv on the command's stdin and stdout until the client
// closes stdin or ctx ends. A client that writes its requests and closes
// stdin at once (printf ... | scrollback mcp) still gets every answer: at
// end of input the server first answers the requests it has read.
func serveStdio(ctx context.Context, srv *mcp.Server, std IO) error {
	var b balance
	b.cond = sync.NewCond(&b.mu)
	stop := context.AfterFunc(ctx, b.cancel) // a signal ends the wait too
	defer stop()
	in := &countingReader{r: std.Stdin, b: &b}
	out := &countingWriter{w: std.Stdout, b: &b}
	err := srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil // the client closed stdin, or we were told to stop
	}
	return err
}

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
// the requests (an id and a method) and the responses (an id, no method;
// or a cancellation, after which no response comes).
type lines struct{ partial []byte }

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
			responses++
		case "notifications/cancelled":
			// A cancelled request gets no answer: count it as answered.
			responses++
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
