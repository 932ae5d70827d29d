package mcpserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/filepager"
)

func TestParseRateLimit(t *testing.T) {
	for _, tc := range []struct {
		in    string
		per   float64 // requests a second
		burst int
		desc  string
	}{
		{"20/s", 20, 20, "20 requests per second"},
		{"0.5/s", 0.5, 1, "0.5 requests per second"},
		{"600/m", 10, 10, "600 requests per minute"},
		{"1/h", 1.0 / 3600, 1, "1 request per hour"},
	} {
		l, err := ParseRateLimit(tc.in)
		if err != nil {
			t.Errorf("ParseRateLimit(%q): %v", tc.in, err)
			continue
		}
		if diff := float64(l.per) - tc.per; diff > 1e-9 || diff < -1e-9 || l.burst != tc.burst || l.String() != tc.desc {
			t.Errorf("ParseRateLimit(%q) = %v/s burst %d %q, want %v/s burst %d %q", tc.in, l.per, l.burst, l, tc.per, tc.burst, tc.desc)
		}
	}
	for _, bad := range []string{"", "20", "20/d", "-1/s", "0/s", "x/s", "Inf/s", "NaN/s"} {
		if _, err := ParseRateLimit(bad); err == nil || !strings.Contains(err.Error(), "such as 20/s") {
			t.Errorf("ParseRateLimit(%q) error %v", bad, err)
		}
	}
}

// TestRateLimitBuckets: each principal has its own bucket; a refused
// request is not charged; a bucket refills at the rate; full buckets are
// forgotten by a sweep.
func TestRateLimitBuckets(t *testing.T) {
	l, _ := ParseRateLimit("2/s")
	now := time.Unix(1_000_000, 0)
	for i := range 2 {
		if w := l.reserve("alice", now); w != 0 {
			t.Fatalf("alice's request %d waited %s", i, w)
		}
	}
	w := l.reserve("alice", now)
	if w <= 0 || w > 500*time.Millisecond {
		t.Fatalf("alice's third request at once: wait %s, want (0, 500ms]", w)
	}
	if w := l.reserve("bob", now); w != 0 {
		t.Errorf("bob waited %s for alice's burst", w)
	}
	// The refusal took no token: after half a second one request passes.
	if w := l.reserve("alice", now.Add(500*time.Millisecond)); w != 0 {
		t.Errorf("alice after the refill: wait %s", w)
	}
	later := now.Add(time.Hour)
	l.mu.Lock()
	l.sweep(later)
	n := len(l.limiters)
	l.mu.Unlock()
	if n != 0 {
		t.Errorf("%d buckets left after a sweep of full ones", n)
	}
}

// TestHTTPRateLimit: over the limit a token gets 429 with Retry-After and
// a JSON-RPC error with its request's id, while another token is served.
func TestHTTPRateLimit(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	limit, _ := ParseRateLimit("1/h")
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{
		TokenSet:  NewTokenSet([]Token{{Name: "alice", Secret: "a-secret"}, {Name: "bob", Secret: "b-secret"}}),
		RateLimit: limit,
	}))
	t.Cleanup(ts.Close)
	alice := map[string]string{"Authorization": "Bearer a-secret"}
	if status, body, _ := postHeaders(t, ts.URL+Path, alice); status != http.StatusOK {
		t.Fatalf("alice's first request: %d %s", status, body)
	}
	status, body, h := postMessage(t, ts.URL+Path, alice, `{"jsonrpc":"2.0","id":42,"method":"ping"}`)
	if status != http.StatusTooManyRequests {
		t.Fatalf("alice's second request: %d %s, want 429", status, body)
	}
	secs, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || secs < 3000 || secs > 3600 {
		t.Errorf("Retry-After %q, want about an hour in seconds", h.Get("Retry-After"))
	}
	var msg struct {
		ID    int `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(body), &msg); err != nil || msg.ID != 42 || msg.Error.Code != CodeLimit ||
		!strings.Contains(msg.Error.Message, "alice") || !strings.Contains(msg.Error.Message, "retry after "+h.Get("Retry-After")+" s") {
		t.Errorf("429 body %q (%v)", body, err)
	}
	if status, body, _ := postHeaders(t, ts.URL+Path, map[string]string{"Authorization": "Bearer b-secret"}); status != http.StatusOK {
		t.Errorf("bob was limited by alice: %d %s", status, body)
	}
	// Health checks are never limited.
	if status, _ := get(t, ts.URL+"/healthz", nil); status != http.StatusOK {
		t.Errorf("/healthz under the limit: %d", status)
	}
}
