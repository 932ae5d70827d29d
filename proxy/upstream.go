package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback/internal/procgroup"
	"github.com/scrollback-dev/scrollback/present"
)

// Upstream says how to reach the MCP server behind the proxy. Set exactly
// one of Command, URL and Dial.
type Upstream struct {
	// Command is the argv of a server spoken to over stdio, e.g.
	// {"npx", "-y", "@modelcontextprotocol/server-filesystem", "/data"}. It
	// runs in its own process group, and is started again for the next
	// call when it exits.
	Command []string
	// Dir is the command's working directory; "" = the proxy's.
	Dir string
	// Env is added to the proxy's environment for the command ("K=V").
	Env []string
	// Stderr receives the command's standard error; nil = os.Stderr.
	Stderr io.Writer

	// URL is the endpoint of a server spoken to over streamable HTTP.
	URL string
	// Header is sent with every HTTP request, e.g. Authorization.
	Header http.Header
	// HTTPClient makes the HTTP requests; nil = a client over
	// http.DefaultTransport.
	HTTPClient *http.Client

	// Dial, when set, opens a connection that speaks newline-delimited
	// JSON-RPC to the upstream (a socket, a pipe to an in-process server).
	Dial func(ctx context.Context) (io.ReadWriteCloser, error)
}

func (u Upstream) validate() error {
	n := 0
	if len(u.Command) > 0 {
		n++
	}
	if u.URL != "" {
		n++
	}
	if u.Dial != nil {
		n++
	}
	if n != 1 {
		return ErrNoUpstream
	}
	return nil
}

// String names the upstream for messages.
func (u Upstream) String() string {
	switch {
	case len(u.Command) > 0:
		return "`" + present.Clip(strings.Join(u.Command, " "), 120) + "`"
	case u.URL != "":
		return u.URL
	}
	return "the upstream connection"
}

// conn is one live connection to the upstream.
type conn struct {
	cs   *mcp.ClientSession
	done chan struct{} // closed when the session has ended
	proc *process      // nil unless the upstream is a command
	caps string        // the client capabilities it declared (JSON)
	// listed: the proxy listed the upstream's features over it before,
	// so that a list now is an answer to a change the upstream told of.
	listed atomic.Bool
	cl     *mcp.Client // the SDK client it belongs to
	ord    *noticeOrder
}

// alive reports whether the session is still up.
func (c *conn) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// why says, after a broken call, what became of the upstream. A command
// is ended first (Close: stdin closed, then SIGTERM, then SIGKILL), so that
// how it exited is known however long a busy machine takes to reap it: a
// server that crashed has already exited and keeps its own exit status.
func (c *conn) why() string {
	if c.proc != nil {
		c.proc.Close()
		select {
		case <-c.proc.exited:
			return "the server process exited (" + c.proc.state() + ")" + c.proc.stderrNote()
		default:
			return "the connection closed and the server process did not exit when killed" + c.proc.stderrNote()
		}
	}
	return "the connection closed"
}

// transport makes the SDK transport for one connection attempt.
func (p *Proxy) transport(ctx context.Context, ord *noticeOrder) (mcp.Transport, *process, error) {
	u := p.up
	limit := p.frameLimit()
	switch {
	case len(u.Command) > 0:
		proc, err := startProcess(u)
		if err != nil {
			return nil, nil, err
		}
		r := p.newCutReader(p.newStrayFilter(proc.stdout, ord), true)
		return &mcp.IOTransport{Reader: io.NopCloser(r), Writer: proc, MaxLineLength: limit}, proc, nil
	case u.URL != "":
		hc := u.HTTPClient
		if hc == nil {
			hc = &http.Client{}
		}
		c := *hc
		c.Transport = &roundTripper{base: hc.Transport, header: u.Header, cut: p.newCutReader, status: &p.authStatus, ord: ord}
		return &mcp.StreamableClientTransport{Endpoint: u.URL, HTTPClient: &c, MaxEventSize: limit}, nil, nil
	default:
		rwc, err := u.Dial(ctx)
		if err != nil {
			return nil, nil, err
		}
		r := p.newCutReader(p.newStrayFilter(rwc, ord), true)
		return &mcp.IOTransport{Reader: io.NopCloser(r), Writer: rwc, MaxLineLength: limit}, nil, nil
	}
}

// roundTripper adds the configured headers to every request and cuts
// over-long strings out of every response body, as cutReader does for a
// command's stdout.
type roundTripper struct {
	base   http.RoundTripper
	header http.Header
	cut    func(r io.Reader, lines bool) *cutReader
	// status holds the last 401 or 403 the upstream answered, 0 after
	// any other answer (see Proxy.authHint).
	status *atomic.Int32
	ord    *noticeOrder // told of the ordered notifications in event streams
}

func (t *roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.header) > 0 {
		r = r.Clone(r.Context())
		for k, vs := range t.header {
			r.Header.Del(k)
			for _, v := range vs {
				r.Header.Add(k, v)
			}
		}
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	res, err := base.RoundTrip(r)
	if err == nil && t.status != nil {
		switch res.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			t.status.Store(int32(res.StatusCode))
		default:
			t.status.Store(0)
		}
	}
	if err != nil || res.Body == nil {
		return res, err
	}
	sse := strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream")
	var body io.Reader = res.Body
	if sse && t.ord != nil {
		body = &sseNotices{r: body, ord: t.ord}
	}
	res.Body = struct {
		io.Reader
		io.Closer
	}{t.cut(body, sse), res.Body}
	return res, nil
}

// process is a command upstream: its stdin and stdout are the connection.
type process struct {
	cmd    *exec.Cmd
	group  procgroup.Group // the command and everything it starts
	stdin  *os.File
	stdout *os.File
	exited chan struct{}
	err    error // cmd.Wait's, valid once exited is closed
	errEnd *lastBytes

	once sync.Once
}

// startProcess starts the command in its own process group, on pipes of
// its own (not cmd.StdoutPipe, which Wait would close under a reader that
// has not drained it yet).
func startProcess(u Upstream) (*process, error) {
	cmd := exec.Command(u.Command[0], u.Command[1:]...)
	cmd.Dir = u.Dir
	if len(u.Env) > 0 {
		cmd.Env = append(os.Environ(), u.Env...)
	}
	var stderr io.Writer = os.Stderr
	if u.Stderr != nil {
		stderr = u.Stderr
	}
	errEnd := &lastBytes{max: stderrNoteMax}
	cmd.Stderr = io.MultiWriter(stderr, errEnd)
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
	cmd.Stdin, cmd.Stdout = inR, outW
	group, err := procgroup.Start(cmd)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	p := &process{cmd: cmd, group: group, stdin: inW, stdout: outR, exited: make(chan struct{}), errEnd: errEnd}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }

// Close ends the server as the MCP specification asks: close its stdin,
// wait, then ask its process group to end (SIGTERM), wait, then end it
// (SIGKILL). On Windows the group is a job object, and asking is ending.
func (p *process) Close() error {
	p.once.Do(func() {
		p.stdin.Close()
		for _, end := range []func(){nil, p.group.Terminate, p.group.Kill} {
			if end != nil {
				end()
			}
			select {
			case <-p.exited:
				// The leader is gone; end what it left in its group too.
				p.group.Kill()
				p.stdout.Close()
				p.group.Close()
				return
			case <-time.After(2 * time.Second):
			}
		}
		p.stdout.Close()
		p.group.Close()
	})
	return nil
}

// state describes how the process ended; call it after exited is closed.
func (p *process) state() string {
	if p.err == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ProcessState.String()
	}
	return fmt.Sprint(p.err)
}

// stderrNoteMax is how much of the end of a dead upstream's stderr its
// error quotes.
const stderrNoteMax = 1024

// stderrNote quotes the end of what the process wrote to stderr, for the
// error that reports its death; "" when it wrote nothing.
func (p *process) stderrNote() string {
	tail := strings.TrimSpace(p.errEnd.String())
	if tail == "" {
		return ""
	}
	return "; the end of its stderr: " + strconv.Quote(tail)
}

// lastBytes keeps the last max bytes written to it, from a character
// boundary.
type lastBytes struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (l *lastBytes) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if len(l.b) > 2*l.max {
		l.b = append(l.b[:0], l.b[len(l.b)-l.max:]...)
	}
	return len(p), nil
}

func (l *lastBytes) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.b[max(0, len(l.b)-l.max):]
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return string(b)
}
