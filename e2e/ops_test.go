package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// What an operator relies on, tried on the real binary: health and
// readiness, metrics, logs, named tokens re-read on SIGHUP, limits, and a
// graceful stop.

// server is a `scrollback mcp --http` process.
type server struct {
	cmd     *exec.Cmd
	url     string // the MCP endpoint
	base    string // http://host:port
	metrics string // the --metrics base, when given
	log     *lockedBuffer
	exited  chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServer starts scrollback mcp --http with args and waits for it to
// print its address(es).
func startServer(t *testing.T, bin, dir string, args ...string) *server {
	t.Helper()
	return startServing(t, bin, dir, append([]string{"mcp", "--http", "127.0.0.1:0"}, args...)...)
}

// startServing starts scrollback with args, which serve HTTP (mcp --http or
// proxy --http), and waits for it to print its address(es).
func startServing(t *testing.T, bin, dir string, args ...string) *server {
	t.Helper()
	return startServingEnv(t, bin, dir, nil, args...)
}

// startServingEnv is startServing with extraEnv added to its environment.
func startServingEnv(t *testing.T, bin, dir string, extraEnv []string, args ...string) *server {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env(dir, extraEnv...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, log: &lockedBuffer{}, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGKILL)
		<-s.exited
	})
	wantMetrics := strings.Contains(strings.Join(args, " "), "--metrics")
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		mcpRE := regexp.MustCompile(`serving .* on (http://[^\s"]+)/mcp \(`)
		metricsRE := regexp.MustCompile(`metrics on (http://[^\s"]+)/metrics`)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			s.log.Write([]byte(line + "\n"))
			if m := mcpRE.FindStringSubmatch(line); m != nil {
				s.base, s.url = m[1], m[1]+"/mcp"
			}
			if m := metricsRE.FindStringSubmatch(line); m != nil {
				s.metrics = m[1]
			}
			if !signalled && s.url != "" && (!wantMetrics || s.metrics != "") {
				signalled = true
				close(ready)
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case <-ready:
		return s
	case <-s.exited:
		t.Fatalf("the server exited: %s", s.log.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the server did not print its address within 30 s: %s", s.log.String())
	}
	return nil
}

// waitUntil polls cond, failing after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

func getStatus(t *testing.T, url string, hdr map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// scrapeMetrics reads /metrics with the Prometheus text parser.
func scrapeMetrics(t *testing.T, base string, hdr map[string]string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s/metrics: %s", base, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// counter returns the value of the family's sample with the labels.
func counter(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
next:
	for _, m := range fams[name].GetMetric() {
		for k, v := range labels {
			found := false
			for _, l := range m.GetLabel() {
				found = found || l.GetName() == k && l.GetValue() == v
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return 0
}

func tryCall(cs *mcp.ClientSession, command string) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": command}})
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestOperatorTeamServer: one server for a team, on the real binary:
// health without a token, metrics behind it (on --metrics too) that parse
// and move with calls, the in-flight limit, an oversize body, a token
// revoked and one added by SIGHUP, and logs without output, arguments or
// tokens.
func TestOperatorTeamServer(t *testing.T) {
	bin := binaryTest(t)
	dir := t.TempDir()
	const aliceTok, bobTok, carolTok = "alice-secret-0b1c2d", "bob-secret-3e4f5a", "carol-secret-6b7c8d"
	tokens := filepath.Join(dir, "tokens")
	os.WriteFile(tokens, []byte("# the team\nalice: "+aliceTok+"\nbob: "+bobTok+"\n"), 0o600)
	s := startServer(t, bin, dir, "--db", filepath.Join(dir, "db"), "--token-file", tokens, "--metrics", "127.0.0.1:0",
		"--max-in-flight", "2", "--max-body", "65536", "--log-format", "json")
	alice := map[string]string{"Authorization": "Bearer " + aliceTok}
	bob := map[string]string{"Authorization": "Bearer " + bobTok}

	// Health needs no token and says nothing about sessions.
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := getStatus(t, s.base+path, nil); code != 200 || strings.Contains(body, "s_") {
			t.Errorf("%s: %d %q", path, code, body)
		}
	}
	if code, _ := getStatus(t, s.base+"/metrics", nil); code != http.StatusUnauthorized {
		t.Errorf("/metrics without a token: %d, want 401", code)
	}
	if code, _ := getStatus(t, s.base+"/healthz", map[string]string{"Origin": "http://evil.example"}); code != http.StatusForbidden {
		t.Errorf("/healthz from a foreign origin: %d, want 403", code)
	}

	ca := connectHTTP(t, s.url, alice)
	cb := connectHTTP(t, s.url, bob)
	okAlice := map[string]string{"tool": "run_command", "outcome": "ok", "token": "alice"}
	before := counter(scrapeMetrics(t, s.base, alice), "scrollback_tool_calls_total", okAlice)
	const outputText = "OUTPUT-TEXT-5e6f7a8b"
	const argValue = "ARGUMENT-VALUE-9c0d1e"
	if res, err := tryCall(ca, "echo "+outputText+" # "+argValue); err != nil || res.IsError {
		t.Fatalf("alice's call: %v %v", err, res)
	}
	// The --metrics address: the same token and Origin rules.
	if code, _ := getStatus(t, s.metrics+"/metrics", nil); code != http.StatusUnauthorized {
		t.Errorf("--metrics /metrics without a token: %d, want 401", code)
	}
	for _, path := range []string{"/metrics", "/healthz", "/readyz"} {
		hdr := map[string]string{"Origin": "http://evil.example", "Authorization": "Bearer " + aliceTok}
		if code, _ := getStatus(t, s.metrics+path, hdr); code != http.StatusForbidden {
			t.Errorf("--metrics %s from a foreign origin: %d, want 403", path, code)
		}
	}
	if code, _ := getStatus(t, s.metrics+"/readyz", nil); code != 200 {
		t.Errorf("--metrics /readyz without a token: %d, want 200", code)
	}
	after := scrapeMetrics(t, s.metrics, bob) // any of the tokens
	if got := counter(after, "scrollback_tool_calls_total", okAlice); got != before+1 {
		t.Errorf("alice's ok run_command calls: %v then %v", before, got)
	}
	if counter(after, "scrollback_tool_call_duration_seconds", map[string]string{"tool": "run_command"}) < 1 || after["go_goroutines"] == nil {
		t.Error("no latency histogram or no Go runtime metrics")
	}
	if counter(after, "scrollback_sessions_active", map[string]string{"token": "alice"}) != 1 {
		t.Error("alice's session is not counted as active")
	}

	// Over the in-flight limit: refused at once while others are served.
	hold := filepath.Join(dir, "hold")
	started := filepath.Join(dir, "started")
	os.Mkdir(started, 0o700)
	wait := fmt.Sprintf("touch '%s'/$$; while [ ! -e '%s' ]; do sleep 0.02; done; echo released", started, hold)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			if res, err := tryCall(ca, wait); err != nil || !strings.Contains(resultText(res), "released") {
				t.Errorf("held call: %v", err)
			}
		})
	}
	waitUntil(t, "two calls in flight", func() bool { ents, _ := os.ReadDir(started); return len(ents) == 2 })
	_, err := tryCall(ca, "true")
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || !strings.Contains(werr.Message, "already has 2 tool calls in flight") {
		t.Errorf("a third call of alice: %v, want the in-flight limit's error", err)
	}
	if res, err := tryCall(cb, "echo bob"); err != nil || !strings.Contains(resultText(res), "bob") {
		t.Errorf("bob while alice is at her limit: %v", err)
	}
	os.WriteFile(hold, nil, 0o600)
	wg.Wait()
	refused := counter(scrapeMetrics(t, s.base, alice), "scrollback_tool_calls_total", map[string]string{"outcome": "refused", "token": "alice"})
	if refused < 1 {
		t.Errorf("refused calls counted: %v", refused)
	}

	// An oversize body gets 413, and the server stays up.
	req, _ := http.NewRequest(http.MethodPost, s.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"`+strings.Repeat("x", 70000)+`"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+aliceTok)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversize body: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if res, err := tryCall(ca, "echo still up"); err != nil || !strings.Contains(resultText(res), "still up") {
		t.Errorf("after the oversize body: %v", err)
	}

	// SIGHUP: bob revoked, carol added, without a restart.
	os.WriteFile(tokens, []byte("alice: "+aliceTok+"\ncarol: "+carolTok+"\n"), 0o600)
	s.cmd.Process.Signal(syscall.SIGHUP)
	waitUntil(t, "the token file re-read", func() bool { return strings.Contains(s.log.String(), "token file re-read") })
	if _, err := tryCall(cb, "echo bob again"); err == nil {
		t.Error("a token revoked by SIGHUP was served")
	}
	if res, err := tryCall(ca, "echo alice again"); err != nil || res.IsError {
		t.Errorf("alice after SIGHUP: %v", err)
	}
	cc := connectHTTP(t, s.url, map[string]string{"Authorization": "Bearer " + carolTok})
	if res, err := tryCall(cc, "echo carol"); err != nil || !strings.Contains(resultText(res), "carol") {
		t.Errorf("carol after SIGHUP: %v", err)
	}

	logs := s.log.String()
	for _, leak := range []string{aliceTok, bobTok, carolTok, outputText, argValue} {
		if strings.Contains(logs, leak) {
			t.Errorf("the log holds %q:\n%s", leak, logs)
		}
	}
	if !regexp.MustCompile(`"msg":"tool call".*"token":"alice".*"tool":"run_command".*"outcome":"ok"`).MatchString(logs) {
		t.Errorf("no call line naming alice:\n%s", logs)
	}
}

// TestOperatorStoreMetrics: the store's statistics reach /metrics on the
// real binary: the retained and stored bytes move after a copy is
// retained, the evicted copies after --session-quota evicts one.
func TestOperatorStoreMetrics(t *testing.T) {
	bin := binaryTest(t)
	dir := t.TempDir()
	s := startServer(t, bin, dir, "--db", filepath.Join(dir, "db"), "--session-quota", "500KiB", "--metrics", "127.0.0.1:0")
	value := func(name string) (float64, bool) {
		fams := scrapeMetrics(t, s.metrics, nil)
		return counter(fams, name, nil), fams[name] != nil
	}
	waitUntil(t, "the store's statistics", func() bool { _, ok := value("scrollback_store_retained_bytes"); return ok })
	if v, _ := value("scrollback_store_retained_bytes"); v != 0 {
		t.Errorf("retained bytes of an empty store: %v", v)
	}
	cs := connectHTTP(t, s.url, nil)
	for i := range 2 { // 400 KB of base64, stored at about 300 KB: two are over the quota
		if res, err := tryCall(cs, "head -c 300000 /dev/urandom | base64"); err != nil || res.IsError {
			t.Fatalf("call %d: %v %v", i, err, res)
		}
		if i == 0 {
			waitUntil(t, "the retained bytes to move", func() bool {
				r, _ := value("scrollback_store_retained_bytes")
				st, _ := value("scrollback_store_stored_bytes")
				return r >= 400000 && st > 250000
			})
		}
	}
	waitUntil(t, "the eviction to show", func() bool { v, _ := value("scrollback_store_evicted_copies_total"); return v == 1 })
	if v, _ := value("scrollback_saved_bytes_total"); v < 800000 {
		t.Errorf("scrollback_saved_bytes_total = %v after two copies of 400 KB", v)
	}
}

// TestOperatorDrain: SIGTERM during a 10-second command lets it finish
// within --drain; with a shorter drain the command's process group is
// killed and the result says so; a second SIGTERM stops at once.
func TestOperatorDrain(t *testing.T) {
	bin := binaryTest(t)

	// start runs a 10-second command and returns once it has begun, with
	// a channel for its result. The call's error, if any, goes with it:
	// the subtests that wait for the result fail on it, and the one that
	// kills the server mid-call expects the connection to end.
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	start := func(t *testing.T, drain string) (*server, <-chan outcome, string) {
		dir := t.TempDir()
		s := startServer(t, bin, dir, "--db", filepath.Join(dir, "db"), "--drain", drain)
		cs := connectHTTP(t, s.url, nil)
		pidFile := filepath.Join(dir, "pid")
		got := make(chan outcome, 1)
		go func() {
			res, err := tryCall(cs, fmt.Sprintf("echo $$ > '%s'.tmp; mv '%[1]s'.tmp '%[1]s'; sleep 10; echo finished", pidFile))
			got <- outcome{res, err}
		}()
		waitUntil(t, "the command to start", func() bool { _, err := os.Stat(pidFile); return err == nil })
		return s, got, pidFile
	}
	exitsWithin := func(s *server, d time.Duration) bool {
		select {
		case <-s.exited:
			return true
		case <-time.After(d):
			return false
		}
	}

	t.Run("finishes within the drain", func(t *testing.T) {
		t.Parallel()
		s, got, _ := start(t, "60s")
		s.cmd.Process.Signal(syscall.SIGTERM)
		// New connections are refused while the call finishes.
		waitUntil(t, "the listener to close", func() bool {
			c, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
			if err == nil {
				c.Close()
			}
			return err != nil
		})
		o := <-got
		if o.err != nil {
			t.Fatalf("the call: %v", o.err)
		}
		res := o.res
		if res == nil || res.IsError || !strings.Contains(resultText(res), "finished") {
			t.Fatalf("the drained call: %+v", res)
		}
		if exit, _ := res.StructuredContent.(map[string]any)["exit_code"].(float64); exit != 0 {
			t.Errorf("exit_code %v", res.StructuredContent)
		}
		if !exitsWithin(s, time.Minute) {
			t.Fatal("the server did not exit after its last call")
		}
		if s.cmd.ProcessState.ExitCode() != 0 || !strings.Contains(s.log.String(), "stopped") {
			t.Errorf("exit %d, log:\n%s", s.cmd.ProcessState.ExitCode(), s.log.String())
		}
	})

	t.Run("killed after the drain", func(t *testing.T) {
		t.Parallel()
		s, got, pidFile := start(t, "1s")
		s.cmd.Process.Signal(syscall.SIGTERM)
		o := <-got
		if o.err != nil {
			t.Fatalf("the call: %v", o.err)
		}
		res := o.res
		if res == nil || res.IsError || strings.Contains(resultText(res), "finished") || !strings.Contains(resultText(res), "shutting down") {
			t.Fatalf("the killed call: %+v", res)
		}
		if sig, _ := res.StructuredContent.(map[string]any)["signal"].(string); sig == "" {
			t.Errorf("no signal in %v", res.StructuredContent)
		}
		data, _ := os.ReadFile(pidFile)
		pgid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		// A killed process is gone once the kernel has run its exit, which
		// a loaded machine may take a moment to schedule: wait for it.
		if live := liveInGroupAfter(pgid, 10*time.Second); len(live) > 0 {
			t.Errorf("the command's process group %d still runs %v", pgid, live)
		}
		if !exitsWithin(s, time.Minute) {
			t.Fatal("the server did not exit")
		}
		if !strings.Contains(s.log.String(), "calls still running were stopped") {
			t.Errorf("log:\n%s", s.log.String())
		}
	})

	t.Run("second SIGTERM stops at once", func(t *testing.T) {
		t.Parallel()
		s, _, _ := start(t, "10m")
		s.cmd.Process.Signal(syscall.SIGTERM)
		waitUntil(t, "the drain to begin", func() bool { return strings.Contains(s.log.String(), "stopping") })
		s.cmd.Process.Signal(syscall.SIGTERM)
		if !exitsWithin(s, time.Minute) { // the drain alone would take 10 minutes
			t.Fatal("a second SIGTERM did not stop the server")
		}
	})
}

// liveInGroup lists the processes of group pgid that are not zombies (a
// container's init may never reap them).
// liveInGroupAfter is liveInGroup once the group is empty, or after
// wait if it never is.
func liveInGroupAfter(pgid int, wait time.Duration) []string {
	deadline := time.Now().Add(wait)
	for {
		live := liveInGroup(pgid)
		if len(live) == 0 || time.Now().After(deadline) {
			return live
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func liveInGroup(pgid int) []string {
	var live []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" {
			live = append(live, e.Name()+" "+s[:strings.LastIndexByte(s, ')')+1])
		}
	}
	return live
}
