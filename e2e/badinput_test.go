package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A bad message is not the end, tried on the real binary: over stdio
// (scrollback mcp and scrollback proxy) and over HTTP, a malformed
// message, an unknown method, a line (a body) of 100 MiB and a message
// that is not UTF-8 each get their JSON-RPC error, and the requests after
// each of them are answered.

// rpcAnswer is one JSON-RPC response, as read off the wire.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// badInputCase is one message and the answer it must get: an error code
// (with the id null when the message's id cannot be known), or a result
// holding want.
type badInputCase struct {
	name    string
	message []byte
	code    int64  // 0: a result
	id      string // the answer's id, "null" for none
	want    string // in the error's message, or in the result
	status  int    // over HTTP
}

// hugeLine is a JSON-RPC request of 100 MiB.
func hugeLine() []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":90,"method":"ping","params":{"pad":"`)
	b.Write(bytes.Repeat([]byte("x"), 100<<20))
	b.WriteString(`"}}`)
	return b.Bytes()
}

func badInputCases() []badInputCase {
	call := func(id int, text string) []byte {
		return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"echo %s"}}}`, id, text)
	}
	return []badInputCase{
		{"malformed", []byte("garbage{{{"), -32700, "null", "invalid character 'g'", 400},
		{"after the malformed one", call(11, "answered-after-garbage"), 0, "11", "answered-after-garbage", 200},
		{"unknown method", []byte(`{"jsonrpc":"2.0","id":12,"method":"no/such/method"}`), -32601, "12", "", 200},
		{"after the unknown method", call(13, "answered-after-unknown"), 0, "13", "answered-after-unknown", 200},
		{"100 MiB", hugeLine(), -32700, "null", "", 413},
		{"after 100 MiB", call(14, "answered-after-huge"), 0, "14", "answered-after-huge", 200},
		{"not UTF-8", []byte("{\"jsonrpc\":\"2.0\",\"id\":15,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}"), -32700, "null", "not valid UTF-8", 400},
		{"after the one not UTF-8", call(16, "answered-after-utf8"), 0, "16", "answered-after-utf8", 200},
		{"ping at the end", []byte(`{"jsonrpc":"2.0","id":17,"method":"ping"}`), 0, "17", "{}", 200},
	}
}

// check compares an answer with what the case wants.
func (c badInputCase) check(t *testing.T, a rpcAnswer) {
	t.Helper()
	if string(a.ID) != c.id {
		t.Errorf("%s: answered with id %s, want %s", c.name, a.ID, c.id)
	}
	switch {
	case c.code != 0 && a.Error == nil:
		t.Errorf("%s: a result %s, want error %d", c.name, a.Result, c.code)
	case c.code != 0 && (a.Error.Code != c.code || !strings.Contains(a.Error.Message, c.want)):
		t.Errorf("%s: error %d %q, want %d with %q", c.name, a.Error.Code, a.Error.Message, c.code, c.want)
	case c.code == 0 && (a.Error != nil || !strings.Contains(string(a.Result), c.want)):
		t.Errorf("%s: %+v %s, want a result with %q", c.name, a.Error, a.Result, c.want)
	}
}

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`

// TestBadInputStdio: scrollback mcp and scrollback proxy over stdio answer
// each bad line with its error and go on.
func TestBadInputStdio(t *testing.T) {
	bin := binaryTest(t)
	for _, tc := range []struct {
		name string
		args func(dir string) []string
	}{
		{"mcp", func(dir string) []string { return []string{"mcp", "--db", filepath.Join(dir, "db")} }},
		{"proxy", func(dir string) []string {
			return []string{"proxy", "--db", filepath.Join(dir, "db"), "--", bin, "mcp", "--db", filepath.Join(dir, "upstream.db")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := exec.Command(bin, tc.args(dir)...)
			cmd.Env = env(dir)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			var stderr lockedBuffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmd.WaitDelay = 10 * time.Second // the proxy's upstream holds stderr too
			exited := make(chan struct{})
			var waitErr error
			go func() { waitErr = cmd.Wait(); close(exited) }()
			t.Cleanup(func() {
				cmd.Process.Kill()
				<-exited
			})
			answers := make(chan []byte)
			go func() {
				r := bufio.NewReaderSize(stdout, 1<<20)
				for {
					line, err := r.ReadBytes('\n')
					if err != nil {
						close(answers)
						return
					}
					answers <- line
				}
			}()
			next := func(what string) rpcAnswer {
				t.Helper()
				select {
				case line, ok := <-answers:
					if !ok {
						t.Fatalf("%s: stdout closed; stderr:\n%s", what, stderr.String())
					}
					var a rpcAnswer
					if err := json.Unmarshal(line, &a); err != nil {
						t.Fatalf("%s: the answer %q is not JSON: %v", what, line, err)
					}
					return a
				case <-time.After(2 * time.Minute):
					t.Fatalf("%s: no answer within 2 minutes; stderr:\n%s", what, stderr.String())
				}
				return rpcAnswer{}
			}
			send := func(msg []byte) {
				t.Helper()
				if _, err := stdin.Write(append(msg, '\n')); err != nil {
					t.Fatalf("writing to stdin: %v; stderr:\n%s", err, stderr.String())
				}
			}
			send([]byte(initializeLine))
			if a := next("initialize"); a.Error != nil || string(a.ID) != "1" {
				t.Fatalf("initialize: %+v", a)
			}
			send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
			for _, c := range badInputCases() {
				send(c.message)
				c.check(t, next(c.name))
			}
			stdin.Close()
			select {
			case <-exited:
				if waitErr != nil {
					t.Errorf("exit at the end of input: %v; stderr:\n%s", waitErr, stderr.String())
				}
			case <-time.After(time.Minute):
				t.Error("the server did not exit at the end of its input")
			}
		})
	}
}

// TestBadInputHTTP: scrollback mcp --http and proxy --http answer each bad body with its
// error (400, or 413 for one over --max-body) and goes on serving the
// session.
func TestBadInputHTTP(t *testing.T) {
	bin := binaryTest(t)
	for _, tc := range []struct {
		name string
		args func(dir string) []string
	}{
		{"mcp", func(dir string) []string {
			return []string{"mcp", "--http", "127.0.0.1:0", "--db", filepath.Join(dir, "db")}
		}},
		{"proxy", func(dir string) []string {
			return []string{"proxy", "--http", "127.0.0.1:0", "--db", filepath.Join(dir, "db"), "--", bin, "mcp", "--db", filepath.Join(dir, "upstream.db")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			badInputHTTP(t, startServing(t, bin, dir, tc.args(dir)...))
		})
	}
}

func badInputHTTP(t *testing.T, s *server) {
	post := func(what string, body []byte, session string) (int, string, rpcAnswer) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var a rpcAnswer
		if resp.StatusCode != http.StatusAccepted {
			// A JSON body, or an event stream whose data line is the answer.
			msg := data
			if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
				for line := range strings.SplitSeq(string(data), "\n") {
					if d, ok := strings.CutPrefix(line, "data: "); ok {
						msg = []byte(d)
					}
				}
			}
			if err := json.Unmarshal(msg, &a); err != nil {
				t.Errorf("%s: %d, the answer %q is not JSON-RPC: %v", what, resp.StatusCode, data, err)
			}
		}
		return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), a
	}
	code, session, a := post("initialize", []byte(initializeLine), "")
	if code != 200 || session == "" || a.Error != nil {
		t.Fatalf("initialize: %d %q %+v", code, session, a)
	}
	if code, _, _ := post("initialized", []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), session); code != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", code)
	}
	for _, c := range badInputCases() {
		code, _, a := post(c.name, c.message, session)
		if code != c.status {
			t.Errorf("%s: status %d, want %d", c.name, code, c.status)
		}
		if c.status == http.StatusRequestEntityTooLarge {
			// The body is not read: its id cannot be known.
			c.code, c.want = -32600, "over 4194304 bytes"
		}
		c.check(t, a)
	}
	select {
	case <-s.exited:
		t.Fatalf("the server exited: %s", s.log.String())
	default:
	}
}
