package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// TestOrigin: a request whose Origin is neither the server's own nor an
// allowed one gets 403 on every path; without an Origin it is served.
func TestOrigin(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{AllowOrigins: []string{"https://app.example.com/"}, Observer: NewObserver(nil)}))
	t.Cleanup(ts.Close)
	own := "http://" + strings.TrimPrefix(ts.URL, "http://")
	for _, tc := range []struct {
		origin string
		path   string
		want   int
	}{
		{"", "/healthz", 200},
		{"", "/metrics", 200},
		{own, "/healthz", 200},
		{"https://APP.example.com", "/readyz", 200},
		{"http://evil.example", "/healthz", 403},
		{"http://evil.example", "/readyz", 403},
		{"http://evil.example", "/metrics", 403},
		{"http://evil.example", "/nowhere", 403},
		{"null", "/healthz", 403},
		{"http://app.example.com", "/healthz", 403}, // another scheme is another origin
	} {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+tc.path, nil)
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		if got, body := do(t, req, nil); got != tc.want {
			t.Errorf("GET %s with Origin %q: %d %q, want %d", tc.path, tc.origin, got, body, tc.want)
		}
	}
	// The MCP endpoint too, for a POST that would otherwise start a session.
	req, _ := http.NewRequest(http.MethodPost, ts.URL+Path, strings.NewReader(initialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if got, body := do(t, req, map[string]string{"Origin": "http://evil.example"}); got != 403 || !strings.Contains(body, "--allow-origin") {
		t.Errorf("POST /mcp from a foreign origin: %d %q", got, body)
	}
	mustHTTPClient(t, ts.URL, map[string]string{"Origin": own})
}

// TestReady: /healthz answers while the process serves; /readyz answers 200
// when the store answers and 503 with the reason when it does not, or not
// within a second; neither needs a token.
func TestReady(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	var mu sync.Mutex
	var fail error
	block := make(chan struct{})
	ready := func(ctx context.Context) error {
		mu.Lock()
		err := fail
		mu.Unlock()
		if errors.Is(err, context.DeadlineExceeded) {
			<-block
		}
		return err
	}
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Tokens: []string{"secret"}, Ready: ready}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(block) })
	check := func(path string, want int, wantBody string) {
		t.Helper()
		got, body := get(t, ts.URL+path, nil)
		if got != want || !strings.Contains(body, wantBody) {
			t.Errorf("%s: %d %q, want %d with %q", path, got, body, want, wantBody)
		}
	}
	check("/healthz", 200, "ok")
	check("/readyz", 200, "ready")
	mu.Lock()
	fail = errors.New("store: connection refused")
	mu.Unlock()
	check("/readyz", 503, "connection refused")
	check("/healthz", 200, "ok")
	mu.Lock()
	fail = context.DeadlineExceeded // blocks until the test ends
	mu.Unlock()
	check("/readyz", 503, "did not answer within 1s")

	// The default asks the engine's store.
	ts2 := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{}))
	t.Cleanup(ts2.Close)
	if got, body := get(t, ts2.URL+"/readyz", nil); got != 200 {
		t.Errorf("readyz on the store: %d %q", got, body)
	}
}

// waitFor polls cond until it holds, failing after a long time.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// TestInFlightLimit: a token over its calls in flight gets a JSON-RPC error
// at once, naming the limit, while another token is served; once a call
// ends, the token may call again.
func TestInFlightLimit(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	limits := NewLimits(2, 0)
	tokens := NewTokenSet([]Token{{"alice", "tok-a"}, {"bob", "tok-b"}})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{TokenSet: tokens, Limits: limits}))
	t.Cleanup(ts.Close)
	alice := mustHTTPClient(t, ts.URL, map[string]string{"Authorization": "Bearer tok-a"})
	bob := mustHTTPClient(t, ts.URL, map[string]string{"Authorization": "Bearer tok-b"})

	release := filepath.Join(t.TempDir(), "release")
	wait := fmt.Sprintf("while [ ! -e '%s' ]; do sleep 0.02; done; echo done", release)
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			res := call(t, alice, "run_command", map[string]any{"command": wait})
			if res.IsError || !strings.Contains(text(res, 0), "done") {
				t.Errorf("held call: %q", text(res, 0))
			}
		})
	}
	waitFor(t, "two calls in flight", func() bool { return limits.InFlight() == 2 })
	_, err := alice.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo three"}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != CodeLimit || !strings.Contains(werr.Message, `token "alice" already has 2 tool calls in flight`) {
		t.Errorf("third call: %v, want the in-flight limit's error", err)
	}
	if res := call(t, bob, "run_command", map[string]any{"command": "echo bob"}); res.IsError || !strings.Contains(text(res, 0), "bob") {
		t.Errorf("another token: %q", text(res, 0))
	}
	os.WriteFile(release, nil, 0o600)
	wg.Wait()
	if res := call(t, alice, "run_command", map[string]any{"command": "echo again"}); res.IsError {
		t.Errorf("after the calls ended: %q", text(res, 0))
	}
}

// TestSessionLimit: a token over its MCP sessions is refused with 429 and
// a JSON-RPC error; closing one makes room.
func TestSessionLimit(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Limits: NewLimits(0, 2), Tokens: []string{"tok-a", "tok-b"}}))
	t.Cleanup(ts.Close)
	auth := map[string]string{"Authorization": "Bearer tok-a"}
	a := mustHTTPClient(t, ts.URL, auth)
	mustHTTPClient(t, ts.URL, auth)
	got, body := post(t, ts.URL+Path, auth)
	if got != http.StatusTooManyRequests || !strings.Contains(body, "has 2 MCP sessions open") || !strings.Contains(body, `"id":1`) || !strings.Contains(body, `"code":-32001`) {
		t.Errorf("third session: %d %q", got, body)
	}
	mustHTTPClient(t, ts.URL, map[string]string{"Authorization": "Bearer tok-b"}) // another token's own count
	a.Close()
	waitFor(t, "a closed session's place", func() bool {
		cs, err := httpClient(t, ts.URL, auth)
		if err == nil {
			cs.Close()
		}
		return err == nil
	})
}

// TestLocalNotLimited: without tokens every session is the local owner's,
// and the per-token limits do not apply.
func TestLocalNotLimited(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	limits := NewLimits(1, 1)
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Limits: limits}))
	t.Cleanup(ts.Close)
	a := mustHTTPClient(t, ts.URL, nil)
	mustHTTPClient(t, ts.URL, nil)
	release := filepath.Join(t.TempDir(), "release")
	done := make(chan struct{})
	go func() {
		defer close(done)
		call(t, a, "run_command", map[string]any{"command": fmt.Sprintf("while [ ! -e '%s' ]; do sleep 0.02; done", release)})
	}()
	waitFor(t, "the first call in flight", func() bool { return limits.InFlight() == 1 })
	if res := call(t, a, "run_command", map[string]any{"command": "echo second"}); res.IsError {
		t.Errorf("a second local call: %q", text(res, 0))
	}
	os.WriteFile(release, nil, 0o600)
	<-done
}

// TestBadMessages: an oversize body gets 413, a body that is not JSON or
// not UTF-8 a JSON-RPC parse error with id null; the server keeps serving.
func TestBadMessages(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{MaxRequestBytes: 64 << 10}))
	t.Cleanup(ts.Close)
	cs := mustHTTPClient(t, ts.URL, nil)
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"garbage", "garbage{{{", 400, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character 'g'`},
		{"cut short", `{"jsonrpc":"2.0","id":1,`, 400, `"code":-32700`},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}", 400, `not valid UTF-8 (byte 55)`},
		{"oversize", `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"` + strings.Repeat("x", 64<<10) + `"}}`, 413, `over 65536 bytes`},
	} {
		for _, session := range []string{"", cs.ID()} {
			req, _ := http.NewRequest(http.MethodPost, ts.URL+Path, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
			}
			got, body := do(t, req, nil)
			if got != tc.status || !strings.Contains(body, tc.want) {
				t.Errorf("%s (session %q): %d %q, want %d with %q", tc.name, session, got, body, tc.status, tc.want)
			}
		}
	}
	// Within the session, messages the SDK refuses get JSON-RPC errors too,
	// not its plain text: an unknown method is answered as stdio answers
	// it.
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"unknown method", `{"jsonrpc":"2.0","id":12,"method":"no/such/method"}`, 200, `{"jsonrpc":"2.0","id":12,"error":{"code":-32601,"message":"method not found: \"no/such/method\" is not a method of this server"}}`},
		{"unknown method, string id", `{"jsonrpc":"2.0","id":"a","method":"no/such/method"}`, 200, `"id":"a","error":{"code":-32601`},
		{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/no_such"}`, 400, `"id":null,"error":{"code":-32601`},
		{"an id on a notification", `{"jsonrpc":"2.0","id":3,"method":"notifications/initialized"}`, 400, `"id":3,"error":{"code":-32600,"message":"invalid request: `},
	} {
		status, ct, body := postInSession(t, ts.URL+Path, cs.ID(), tc.body)
		if status != tc.status || !strings.Contains(body, tc.want) || ct != "application/json" {
			t.Errorf("%s: %d %s %q, want %d with %q", tc.name, status, ct, body, tc.status, tc.want)
		}
	}
	if res := call(t, cs, "run_command", map[string]any{"command": "echo still"}); res.IsError || !strings.Contains(text(res, 0), "still") {
		t.Errorf("after: %q", text(res, 0))
	}
}

// scrape reads /metrics with the Prometheus text parser.
func scrape(t *testing.T, url string, hdr map[string]string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/metrics", nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// sample returns the value of the family's metric with the labels, or 0.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
next:
	for _, m := range f.GetMetric() {
		for k, v := range labels {
			found := false
			for _, l := range m.GetLabel() {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
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

// TestMetricsAndLogs: /metrics needs the token, parses, and its counters
// move with calls; each call is one log line naming the token's name, the
// tool and the outcome, never the output, the arguments or the token.
func TestMetricsAndLogs(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	var logs syncBuffer
	obs := NewObserver(slog.New(slog.NewJSONHandler(&logs, nil)))
	eng = scrollback.New(obs.Store(eng.Store()), eng.Options())
	const secret = "tok-alice-7f3a9c"
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{TokenSet: NewTokenSet([]Token{{"alice", secret}}), Observer: obs}))
	t.Cleanup(ts.Close)
	auth := map[string]string{"Authorization": "Bearer " + secret}
	if got, _ := get(t, ts.URL+"/metrics", nil); got != http.StatusUnauthorized {
		t.Errorf("/metrics without the token: %d", got)
	}
	cs := mustHTTPClient(t, ts.URL, auth)
	okCalls := map[string]string{"tool": "run_command", "outcome": "ok", "token": "alice"}
	before := scrape(t, ts.URL, auth)
	if n := sample(before, "scrollback_tool_calls_total", okCalls); n != 0 {
		t.Errorf("calls before any: %v", n)
	}
	if n := sample(before, "scrollback_sessions_active", map[string]string{"token": "alice"}); n != 1 {
		t.Errorf("sessions active: %v, want 1", n)
	}
	if before["go_goroutines"] == nil {
		t.Error("no Go runtime metrics")
	}

	const output = "OUTPUT-CONTENT-d41d8c"
	const argument = "ARGUMENT-VALUE-98f00b"
	res := call(t, cs, "run_command", map[string]any{"command": "echo " + output + "; : " + argument + "; seq 20000"})
	var rc scrollback.RunCommandResult
	decode(t, res, &rc)
	call(t, cs, "read_tool_output", map[string]any{"id": rc.OutputID})
	call(t, cs, "read_tool_output", map[string]any{"id": "out_nosuchcopyaaaaaaaaaaaaaaaa"})

	after := scrape(t, ts.URL, auth)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"scrollback_tool_calls_total", okCalls, 1},
		{"scrollback_tool_calls_total", map[string]string{"tool": "read_tool_output", "outcome": "ok", "token": "alice"}, 1},
		{"scrollback_tool_calls_total", map[string]string{"tool": "read_tool_output", "outcome": "not_found", "token": "alice"}, 1},
		{"scrollback_tool_call_duration_seconds", map[string]string{"tool": "read_tool_output"}, 2},
		{"scrollback_tool_call_duration_seconds", map[string]string{"tool": "run_command"}, 1},
	} {
		if got := sample(after, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, got, tc.want)
		}
	}
	var failed float64
	for _, m := range after["scrollback_tool_calls_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "outcome" && l.GetValue() != "ok" {
				failed += m.Counter.GetValue()
			}
		}
	}
	if failed != 1 {
		t.Errorf("failed calls counted: %v, want 1", failed)
	}
	if got := sample(after, "scrollback_saved_bytes_total", nil); got != float64(rc.TotalBytes) {
		t.Errorf("saved bytes: %v, want %d", got, rc.TotalBytes)
	}

	text := logs.String()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	var calls []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		if m["msg"] == "tool call" {
			calls = append(calls, m)
		}
	}
	if len(calls) != 3 {
		t.Fatalf("%d tool call lines, want 3:\n%s", len(calls), text)
	}
	first := calls[0]
	for k, want := range map[string]any{"token": "alice", "tool": "run_command", "outcome": "ok", "session": res.Meta[MetaSession]} {
		if first[k] != want {
			t.Errorf("log %s = %v, want %v", k, first[k], want)
		}
	}
	if first["result_bytes"].(float64) <= 0 || first["args_bytes"].(float64) <= 0 || first["duration"] == nil {
		t.Errorf("sizes and duration missing: %v", first)
	}
	for _, leak := range []string{secret, output, argument, "seq 20000"} {
		if strings.Contains(text, leak) {
			t.Errorf("the logs contain %q:\n%s", leak, text)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTokenRevoked: a token taken out of the set is refused from its next
// request on, while the others go on.
func TestTokenRevoked(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	tokens := NewTokenSet([]Token{{"alice", "tok-a"}, {"bob", "tok-b"}})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{TokenSet: tokens}))
	t.Cleanup(ts.Close)
	alice := mustHTTPClient(t, ts.URL, map[string]string{"Authorization": "Bearer tok-a"})
	bob := mustHTTPClient(t, ts.URL, map[string]string{"Authorization": "Bearer tok-b"})
	call(t, bob, "run_command", map[string]any{"command": "true"})
	tokens.Replace([]Token{{"alice", "tok-a"}})
	if _, err := bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "true"}}); err == nil {
		t.Error("a revoked token's call was served")
	}
	if res := call(t, alice, "run_command", map[string]any{"command": "echo alice"}); res.IsError {
		t.Errorf("alice: %q", text(res, 0))
	}
	tokens.Replace([]Token{{"alice", "tok-a"}, {"carol", "tok-c"}})
	mustHTTPClient(t, ts.URL, map[string]string{"Authorization": "Bearer tok-c"})
}

// TestDrain: Drain refuses new calls, lets a call in flight finish within
// its context, and cancels (kills the command of) one that does not.
func TestDrain(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	limits := NewLimits(0, 0)
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Limits: limits}))
	t.Cleanup(ts.Close)
	cs := mustHTTPClient(t, ts.URL, nil)
	other := mustHTTPClient(t, ts.URL, nil)
	got := make(chan *mcp.CallToolResult, 1)
	started := filepath.Join(t.TempDir(), "started")
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo started; touch '" + started + "'; sleep 60"}})
		if err != nil {
			t.Error(err)
		}
		got <- res
	}()
	waitFor(t, "the command to start", func() bool { _, err := os.Stat(started); return err == nil })
	ctx, cancel := context.WithCancel(context.Background())
	drained := make(chan int, 1)
	go func() { drained <- limits.Drain(ctx) }()
	waitFor(t, "draining", func() bool {
		_, err := other.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "true"}})
		var werr *jsonrpc.Error
		return errors.As(err, &werr) && strings.Contains(werr.Message, "shutting down")
	})
	cancel() // the drain's time is up
	if n := <-drained; n != 1 {
		t.Errorf("Drain cancelled %d calls, want 1", n)
	}
	res := <-got
	var rc scrollback.RunCommandResult
	decode(t, res, &rc)
	if rc.Signal == "" || rc.ExitCode != nil || !strings.Contains(rc.Preview, "started") {
		t.Errorf("the killed command's result: %+v", rc)
	}
	if !limits.Wait(context.Background()) {
		t.Error("calls left in flight")
	}
}

// TestWatchStore: the store's statistics, asked in the background, appear
// as metrics; a failure to get them counts as a store error and hides them
// (not the other metrics) until they answer again; stop waits for the
// watcher to end.
func TestWatchStore(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	obs := NewObserver(nil)
	obs.statsGap = time.Millisecond
	var fail atomic.Bool
	var asked atomic.Int64
	stop := obs.WatchStore(context.Background(), time.Millisecond, func(context.Context) (StoreStats, error) {
		asked.Add(1)
		if fail.Load() {
			return StoreStats{}, errors.New("database down")
		}
		return StoreStats{RetainedBytes: 3000, StoredBytes: 1000, Evicted: 7}, nil
	})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Observer: obs}))
	t.Cleanup(ts.Close)
	waitFor(t, "the statistics", func() bool { return scrape(t, ts.URL, nil)["scrollback_store_retained_bytes"] != nil })
	fams := scrape(t, ts.URL, nil)
	for name, want := range map[string]float64{"scrollback_store_retained_bytes": 3000, "scrollback_store_stored_bytes": 1000, "scrollback_store_evicted_copies_total": 7} {
		if got := sample(fams, name, nil); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	fail.Store(true)
	waitFor(t, "the failure to show", func() bool {
		fams := scrape(t, ts.URL, nil)
		return fams["scrollback_store_retained_bytes"] == nil && sample(fams, "scrollback_store_errors_total", map[string]string{"op": "stats"}) >= 1
	})
	if fams := scrape(t, ts.URL, nil); fams["go_goroutines"] == nil {
		t.Error("with the stats failing, the Go runtime's metrics went too")
	}
	fail.Store(false)
	waitFor(t, "the statistics back", func() bool { return scrape(t, ts.URL, nil)["scrollback_store_retained_bytes"] != nil })
	stop()
	n := asked.Load()
	time.Sleep(20 * time.Millisecond) // twenty periods
	if asked.Load() != n {
		t.Error("the statistics were asked for after stop returned")
	}
}

// TestWatchStoreMoves: on a real store, the retained and stored bytes move
// after a copy is retained, and the evicted copies after a quota evicts
// one, with a period far longer than the test: each save asks again.
func TestWatchStoreMoves(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "saved whole", true: "saved while running"}[streamed], func(t *testing.T) {
			st, err := sqlite.Open(filepath.Join(t.TempDir(), "db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			st.SetLimits(store.Limits{SessionQuota: 500 << 10})
			obs := NewObserver(nil)
			obs.statsGap = time.Millisecond
			stop := obs.WatchStore(context.Background(), time.Hour, func(ctx context.Context) (StoreStats, error) {
				s, err := st.Stats(ctx, "")
				return StoreStats{RetainedBytes: s.LogicalBytes, StoredBytes: s.StoredBytes, Evicted: s.Evictions}, err
			})
			t.Cleanup(stop)
			eng := scrollback.New(obs.Store(st), scrollback.Options{})
			ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Observer: obs}))
			t.Cleanup(ts.Close)
			cs := mustHTTPClient(t, ts.URL, nil)
			waitFor(t, "the first statistics", func() bool { return scrape(t, ts.URL, nil)["scrollback_store_retained_bytes"] != nil })
			if fams := scrape(t, ts.URL, nil); sample(fams, "scrollback_store_retained_bytes", nil) != 0 || sample(fams, "scrollback_store_evicted_copies_total", nil) != 0 {
				t.Fatalf("an empty store: %v", fams["scrollback_store_retained_bytes"])
			}
			// 400 KB of base64, stored at about 300 KB (its 64 symbols
			// take six bits each): two of them are over the quota.
			command := "head -c 300000 /dev/urandom | base64"
			if streamed {
				command = "head -c 150000 /dev/urandom | base64; sleep 0.5; head -c 150000 /dev/urandom | base64"
			}
			run := func() {
				res := call(t, cs, "run_command", map[string]any{"command": command})
				var rc scrollback.RunCommandResult
				decode(t, res, &rc)
				if rc.OutputID == "" {
					t.Fatalf("no copy retained: %+v", rc)
				}
			}
			run()
			waitFor(t, "the retained bytes to move", func() bool {
				fams := scrape(t, ts.URL, nil)
				return sample(fams, "scrollback_store_retained_bytes", nil) >= 400000 && sample(fams, "scrollback_store_stored_bytes", nil) > 250000
			})
			if got := sample(scrape(t, ts.URL, nil), "scrollback_saved_bytes_total", nil); got < 400000 {
				t.Errorf("scrollback_saved_bytes_total = %v after a copy of 400 KB", got)
			}
			run()
			waitFor(t, "the eviction to show", func() bool {
				return sample(scrape(t, ts.URL, nil), "scrollback_store_evicted_copies_total", nil) == 1
			})
		})
	}
}

// Observing a store keeps what it offers beyond the Store contract: an
// HTTP server saves while commands run only through a Streamer, and applies
// retention and stats only through a Housekeeper.
func TestObservedStoreKeepsItsInterfaces(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	obs := NewObserver(nil).Store(st)
	if _, ok := obs.(store.Housekeeper); !ok {
		t.Error("the observed store is no longer a store.Housekeeper")
	}
	if _, ok := obs.(store.Streamer); !ok {
		t.Error("the observed store is no longer a store.Streamer")
	}
	if plain := NewObserver(nil).Store(bareStore{st}); plain == nil {
		t.Error("no store")
	} else if _, ok := plain.(store.Streamer); ok {
		t.Error("a store without BeginCopy became a Streamer by being observed")
	}
}

// bareStore hides everything but the Store contract.
type bareStore struct{ store.Store }

// TestOpsHandler: the --metrics address follows the MCP address's rules:
// a foreign Origin gets 403 on every path, /metrics needs one of the
// tokens when tokens are configured (and a token revoked from the set is
// refused), the health checks need none.
func TestOpsHandler(t *testing.T) {
	tokens := NewTokenSet([]Token{{Name: "alice", Secret: "alice-secret"}, {Name: "bob", Secret: "bob-secret"}})
	ready := func(context.Context) error { return nil }
	guarded := httptest.NewServer(OpsHandler(OpsOptions{Observer: NewObserver(nil), Ready: ready, TokenSet: tokens, AllowOrigins: []string{"https://app.example.com"}}))
	t.Cleanup(guarded.Close)
	open := httptest.NewServer(OpsHandler(OpsOptions{Observer: NewObserver(nil), Ready: ready}))
	t.Cleanup(open.Close)
	for _, tc := range []struct {
		name          string
		ts            *httptest.Server
		path          string
		origin, token string
		want          int
	}{
		{"metrics without a token", guarded, "/metrics", "", "", 401},
		{"metrics with a bad token", guarded, "/metrics", "", "mallory", 401},
		{"metrics with a token", guarded, "/metrics", "", "alice-secret", 200},
		{"metrics with a token from a foreign origin", guarded, "/metrics", "http://evil.example", "alice-secret", 403},
		{"metrics with a token from an allowed origin", guarded, "/metrics", "https://app.example.com", "alice-secret", 200},
		{"metrics with a token from its own origin", guarded, "/metrics", "own", "alice-secret", 200},
		{"healthz without a token", guarded, "/healthz", "", "", 200},
		{"readyz without a token", guarded, "/readyz", "", "", 200},
		{"healthz from a foreign origin", guarded, "/healthz", "http://evil.example", "", 403},
		{"readyz from a foreign origin", guarded, "/readyz", "http://evil.example", "", 403},
		{"another path", guarded, "/mcp", "", "alice-secret", 404},
		{"another path from a foreign origin", guarded, "/nowhere", "http://evil.example", "", 403},
		{"no tokens: metrics open", open, "/metrics", "", "", 200},
		{"no tokens: metrics from a foreign origin", open, "/metrics", "http://evil.example", "", 403},
		{"no tokens: healthz from a foreign origin", open, "/healthz", "null", "", 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodGet, tc.ts.URL+tc.path, nil)
			hdr := map[string]string{}
			if tc.origin == "own" {
				hdr["Origin"] = tc.ts.URL
			} else if tc.origin != "" {
				hdr["Origin"] = tc.origin
			}
			if tc.token != "" {
				hdr["Authorization"] = "Bearer " + tc.token
			}
			if got, body := do(t, req, hdr); got != tc.want {
				t.Errorf("GET %s: %d %q, want %d", tc.path, got, body, tc.want)
			}
		})
	}
	// bob revoked: refused from his next scrape on.
	bob := map[string]string{"Authorization": "Bearer bob-secret"}
	if fams := scrape(t, guarded.URL, bob); fams["go_goroutines"] == nil {
		t.Error("bob's scrape has no Go runtime metrics")
	}
	tokens.Replace([]Token{{Name: "alice", Secret: "alice-secret"}})
	req, _ := http.NewRequest(http.MethodGet, guarded.URL+"/metrics", nil)
	if got, _ := do(t, req, bob); got != 401 {
		t.Errorf("a revoked token's scrape: %d, want 401", got)
	}
}

// TestLoopbackHost: a server without tokens on a loopback address refuses,
// on every path, a request whose Host is not a loopback name (a page whose
// DNS name was re-pointed at 127.0.0.1 calls it with its own Host and
// Origin); a server with a token serves any Host, as behind a reverse
// proxy on the same host that passes on the public one.
func TestLoopbackHost(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	const token = "host-token-0123456789"
	open := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Observer: NewObserver(nil)}))
	t.Cleanup(open.Close)
	guarded := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Tokens: []string{token}, Observer: NewObserver(nil)}))
	t.Cleanup(guarded.Close)
	ops := httptest.NewServer(OpsHandler(OpsOptions{Observer: NewObserver(nil), Ready: func(context.Context) error { return nil }}))
	t.Cleanup(ops.Close)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(open.URL, "http://"))
	send := func(base, method, path, host string, hdr map[string]string) (int, string) {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(initialize)
		}
		req, _ := http.NewRequest(method, base+path, body)
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		return do(t, req, hdr)
	}
	rebound := "rebound.example:" + port
	for _, path := range []string{Path, "/healthz", "/readyz", "/metrics"} {
		method := http.MethodGet
		if path == Path {
			method = http.MethodPost
		}
		got, body := send(open.URL, method, path, rebound, map[string]string{"Origin": "http://" + rebound})
		if got != http.StatusForbidden || !strings.Contains(body, "DNS rebinding") || !strings.Contains(body, "--token-file") {
			t.Errorf("%s %s with Host %s, no token: %d %.200q, want 403 naming the rebinding guard", method, path, rebound, got, body)
		}
		if path != Path {
			if got, _ := send(ops.URL, method, path, rebound, nil); got != http.StatusForbidden {
				t.Errorf("--metrics address: %s %s with Host %s: %d, want 403", method, path, rebound, got)
			}
		}
	}
	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST", "[::1]:" + port, "127.0.0.2"} {
		if got, body := send(open.URL, http.MethodPost, Path, host, nil); got != http.StatusOK {
			t.Errorf("POST with Host %s, no token: %d %q, want 200", host, got, body)
		}
	}
	// With a token, the public Host a reverse proxy passes on is served.
	if got, body := send(guarded.URL, http.MethodPost, Path, "scrollback.example.com", map[string]string{"Authorization": "Bearer " + token}); got != http.StatusOK {
		t.Errorf("POST with a token and Host scrollback.example.com: %d %q, want 200", got, body)
	}
	if got, body := send(guarded.URL, http.MethodPost, Path, "scrollback.example.com", nil); got != http.StatusUnauthorized {
		t.Errorf("POST without the token and Host scrollback.example.com: %d %q, want 401", got, body)
	}
}

// TestCORS: a browser page of an origin given with --allow-origin can call
// the server: its preflight is answered 204 without a token, naming the
// methods and headers, and every answer (a 401 included) names the origin
// and exposes Mcp-Session-Id. Another origin's preflight gets 403, and
// requests without an allowed Origin get no CORS headers.
func TestCORS(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	const token, app = "cors-token-0123456789", "https://app.example.com"
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{Tokens: []string{token}, AllowOrigins: []string{app}}))
	t.Cleanup(ts.Close)
	send := func(method, origin string, hdr map[string]string) *http.Response {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(initialize)
		}
		req, _ := http.NewRequest(method, ts.URL+Path, body)
		req.Header.Set("Origin", origin)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	pre := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version"}
	resp := send(http.MethodOptions, app, pre)
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "authorization") {
		t.Errorf("preflight from %s: %d %v, want 204 allowing POST and Authorization", app, resp.StatusCode, resp.Header)
	}
	if resp := send(http.MethodOptions, "https://evil.example.com", pre); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight from another origin: %d %v, want 403 without CORS headers", resp.StatusCode, resp.Header)
	}
	post := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	resp = send(http.MethodPost, app, post)
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Errorf("POST from %s without the token: %d %v, want 401 the page can read", app, resp.StatusCode, resp.Header)
	}
	post["Authorization"] = "Bearer " + token
	resp = send(http.MethodPost, app, post)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" || resp.Header.Get("Access-Control-Allow-Origin") != app ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("initialize from %s: %d %v, want 200 exposing Mcp-Session-Id", app, resp.StatusCode, resp.Header)
	}
	own := "http://" + strings.TrimPrefix(ts.URL, "http://")
	if resp := send(http.MethodPost, own, post); resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("initialize from the server's own origin: %d, Access-Control-Allow-Origin %q; want 200 and none", resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
	}
}
