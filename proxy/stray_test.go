package proxy

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
)

// strayLines are lines a server writes to its stdout that are not MCP
// messages: a banner from console.log, a JSON log line (pino writes to
// stdout by default), an object as Node's console.log prints it, a log
// line in brackets, an empty line. A client made with the TypeScript SDK
// (Claude Desktop, Claude Code, Cursor) skips them and goes on.
var strayLines = []string{
	"Server running on stdio",
	`{"level":30,"time":1733530000000,"msg":"listening"}`,
	"{ a: 1, b: 'two' }",
	"[INFO] ready",
	"",
	"\xff\xfe not UTF-8",
}

// straying is a connection to an upstream that writes the stray lines
// before its first message and one of them after each message it sends.
type straying struct {
	io.ReadWriteCloser
	pend []byte
	n    int
}

func (s *straying) Read(p []byte) (int, error) {
	if s.n == 0 {
		s.pend = []byte(strings.Join(strayLines, "\n") + "\n")
		s.n++
	}
	if len(s.pend) == 0 {
		buf := make([]byte, len(p))
		n, err := s.ReadWriteCloser.Read(buf)
		s.pend = buf[:n]
		if n > 0 && buf[n-1] == '\n' {
			s.pend = append(s.pend, strayLines[s.n%len(strayLines)]+"\n"...)
			s.n++
		}
		if n == 0 {
			return 0, err
		}
	}
	n := copy(p, s.pend)
	s.pend = s.pend[n:]
	return n, nil
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestStrayStdoutLines: lines on the upstream's stdout that are not MCP
// messages are skipped and logged, as a TypeScript SDK client skips them;
// they neither keep the proxy from starting nor break a call and restart
// the upstream.
func TestStrayStdoutLines(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := "printf '%s\\n' \"$@\"; exec \"$0\""
	cases := []struct {
		name string
		up   Upstream
	}{
		{"command", Upstream{Command: append([]string{"sh", "-c", script, exe}, strayLines...), Env: []string{upstreamEnv + "=1"}, Stderr: io.Discard}},
		{"dial", Upstream{Dial: func(ctx context.Context) (io.ReadWriteCloser, error) {
			rwc, err := dialServer(testUpstream())(ctx)
			return &straying{ReadWriteCloser: rwc}, err
		}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logged syncBuffer
			p, _, cs := start(t, c.up, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))}, nil)
			for i := range 4 {
				res := call(t, cs, "echo", map[string]any{"text": "hello"})
				if res.IsError || text(res) != "hello" {
					t.Fatalf("call %d: %v %q", i, res.IsError, text(res))
				}
			}
			big := call(t, cs, "big", map[string]any{"n": 100000})
			if id, _, _ := meta(t, big); id == "" {
				t.Fatalf("the big result was not retained: %q", text(big))
			}
			if n := p.UpstreamRestarts(); n != 0 {
				t.Errorf("the upstream was restarted %d times", n)
			}
			if !strings.Contains(logged.String(), "Server running on stdio") {
				t.Errorf("the stray line is not in the log:\n%s", logged.String())
			}
		})
	}
}

// FuzzStrayFilter: whatever the bytes and however they arrive, the filter
// passes exactly the lines a line-by-line reading passes: the JSON-RPC
// messages among the lines it holds, the lines beginning with '{' or '['
// among those too long to hold; and tells of every other line that is not
// blank.
func FuzzStrayFilter(f *testing.F) {
	f.Add([]byte("banner\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{ a: 1 }\n"), uint8(3), uint8(40))
	f.Add([]byte("[INFO] x\n[{\"jsonrpc\":\"2.0\",\"method\":\"m\"}]\r\n\n{\"jsonrpc\":\"1.0\"}\n{\"jsonrpc\":\"2.0\"}"), uint8(1), uint8(8))
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"result\":{\"text\":\"a very long line that is longer than the probe\"}}\nlong line that is not json at all here\n"), uint8(5), uint8(16))
	f.Fuzz(func(t *testing.T, in []byte, chunk, probe uint8) {
		var want []byte
		told := 0
		for rest := in; len(rest) > 0; {
			line := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				line = rest[:i+1]
			}
			rest = rest[len(line):]
			pass := isMessage(line)
			if len(line) > int(probe) {
				c := firstByte(line[:int(probe)+1])
				pass = c == '{' || c == '['
			}
			switch {
			case pass:
				want = append(want, line...)
			case len(line) > int(probe) || len(bytes.TrimSpace(line)) > 0:
				told++
			}
		}
		n := 0
		sf := newStrayFilter(&chunked{b: in, n: int(chunk%7) + 1}, func(line []byte) {
			if len(line) > strayShow {
				t.Errorf("told %d bytes of a line, more than %d", len(line), strayShow)
			}
			n++
		})
		sf.probe = int(probe)
		got, err := io.ReadAll(sf)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("passed %q, want %q", got, want)
		}
		if n != told {
			t.Errorf("told of %d stray lines, want %d", n, told)
		}
	})
}

// chunked reads b n bytes at a time.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := min(c.n, len(c.b), len(p))
	copy(p, c.b[:k])
	c.b = c.b[k:]
	return k, nil
}
