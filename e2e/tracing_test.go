package e2e

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver receives OTLP/HTTP trace exports (protobuf), as an
// OpenTelemetry collector's OTLP HTTP receiver does, decoded with the
// protocol's own generated types.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	attrs []string // every attribute value seen, resource ones included
	names map[string]string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req collector.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, kv := range rs.GetResource().GetAttributes() {
			o.attrs = append(o.attrs, kv.GetValue().String())
			if kv.Key == "service.name" {
				o.names["service.name"] = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				o.spans = append(o.spans, s)
				for _, kv := range s.Attributes {
					o.attrs = append(o.attrs, kv.GetValue().String())
				}
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	b, _ = proto.Marshal(&collector.ExportTraceServiceResponse{})
	w.Write(b)
}

// TestTracingOTLP: a server configured only by OTEL_* variables exports
// spans of its requests, tool calls and store operations over OTLP/HTTP,
// in the trace an incoming traceparent names, under the service name
// given; no span holds output text, argument values or the token.
func TestTracingOTLP(t *testing.T) {
	bin, _ := setup(t)
	rcv := &otlpReceiver{names: map[string]string{}}
	ts := httptest.NewServer(rcv)
	t.Cleanup(ts.Close)
	dir := t.TempDir()
	tokens := dir + "/tokens.txt"
	if err := os.WriteFile(tokens, []byte("alice: trace-secret-token-7f3a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServingEnv(t, bin, dir, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + ts.URL,
		"OTEL_SERVICE_NAME=scrollback-e2e",
		"OTEL_BSP_SCHEDULE_DELAY=50",
	}, "mcp", "--http", "127.0.0.1:0", "--token-file", tokens)
	if !strings.Contains(s.log.String(), "tracing over OTLP http/protobuf") {
		t.Errorf("the banner does not say it traces: %s", s.log.String())
	}

	const traceID = "0af7651916cd43dd8448eb211c80319c"
	cs := connectHTTP(t, s.url, map[string]string{
		"Authorization": "Bearer trace-secret-token-7f3a",
		"traceparent":   "00-" + traceID + "-b7ad6b7169203331-01",
	})
	res := callTool(t, cs, "run_command", map[string]any{"command": "printf 'SECRET-OUTPUT-%05d\\n' $(seq 1 5000)"})
	var run struct {
		OutputID string `json:"output_id"`
	}
	decodeStructured(t, res, &run)
	if run.OutputID == "" {
		t.Fatalf("no copy: %s", textOf(res))
	}
	callTool(t, cs, "read_tool_output", map[string]any{"id": run.OutputID, "offset": 4096})
	cs.Close()

	// SIGTERM flushes what is not yet exported.
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not stop within 30 s of SIGTERM")
	}

	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if rcv.names["service.name"] != "scrollback-e2e" {
		t.Errorf("service.name %q, want OTEL_SERVICE_NAME's", rcv.names["service.name"])
	}
	seen := map[string]bool{}
	for _, sp := range rcv.spans {
		seen[sp.Name] = true
		if got := strings.ToLower(hexID(sp.TraceId)); got != traceID {
			t.Errorf("span %q in trace %s, not the caller's %s", sp.Name, got, traceID)
		}
	}
	for _, want := range []string{"POST /mcp", "tools/call run_command", "tools/call read_tool_output", "store.save_copy", "store.read_copy"} {
		if !seen[want] {
			t.Errorf("no span %q among %v", want, seen)
		}
	}
	for _, v := range rcv.attrs {
		for _, forbidden := range []string{"trace-secret-token-7f3a", "SECRET-OUTPUT", run.OutputID, "printf"} {
			if strings.Contains(v, forbidden) {
				t.Errorf("an exported attribute %q holds %q", v, forbidden)
			}
		}
	}
}

func hexID(b []byte) string { return hex.EncodeToString(b) }
