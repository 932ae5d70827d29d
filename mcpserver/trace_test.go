package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
)

// TestTracing: with a tracer provider, each request to /mcp is a server
// span that continues the caller's traceparent, each MCP request a span
// under it named by method and tool, and store operations spans under
// those; no span holds output text, argument values or the token.
func TestTracing(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })

	eng, _ := newEngine(t, filepager.Options{})
	obs := NewObserver(nil)
	obs.Trace(tp, nil)
	eng = scrollback.New(obs.Store(eng.Store()), scrollback.Options{})
	ts := httptest.NewServer(NewHTTPHandler(eng, HTTPOptions{
		TokenSet: NewTokenSet([]Token{{Name: "alice", Secret: "very-secret-token"}}),
		Observer: obs,
	}))
	t.Cleanup(ts.Close)

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	cs := mustHTTPClient(t, ts.URL, map[string]string{
		"Authorization": "Bearer very-secret-token",
		"traceparent":   "00-" + traceID + "-00f067aa0ba902b7-01",
	})
	id, _ := runBig(t, cs)
	if res := call(t, cs, "read_tool_output", map[string]any{"id": id, "offset": 100, "limit": 50}); res.IsError {
		t.Fatal(text(res, 0))
	}
	tp.ForceFlush(context.Background())
	spans := exp.GetSpans()

	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
		if got := s.SpanContext.TraceID().String(); got != traceID {
			t.Errorf("span %q is in trace %s, not the caller's %s", s.Name, got, traceID)
		}
		for _, kv := range s.Attributes {
			v := kv.Value.Emit()
			for _, secret := range []string{"very-secret-token", id, "seq 100000", "99999\n"} {
				if strings.Contains(v, secret) {
					t.Errorf("span %q attribute %s=%q holds %q", s.Name, kv.Key, v, secret)
				}
			}
		}
	}
	for _, want := range []string{"POST /mcp", "initialize", "tools/call run_command", "tools/call read_tool_output", "store.save_copy", "store.read_copy"} {
		if _, ok := byName[want]; !ok {
			names := make([]string, 0, len(spans))
			for _, s := range spans {
				names = append(names, s.Name)
			}
			t.Fatalf("no span %q among %q", want, names)
		}
	}
	attrs := func(s tracetest.SpanStub) map[string]string {
		m := map[string]string{}
		for _, kv := range s.Attributes {
			m[string(kv.Key)] = kv.Value.Emit()
		}
		return m
	}
	run := attrs(byName["tools/call run_command"])
	if run["gen_ai.tool.name"] != "run_command" || run["mcp.method.name"] != "tools/call" || run["scrollback.outcome"] != "ok" ||
		run["scrollback.principal"] != "alice" || !strings.HasPrefix(run["scrollback.session"], "s_") || run["scrollback.result_bytes"] == "0" {
		t.Errorf("run_command span attributes: %v", run)
	}
	if byName["tools/call run_command"].SpanKind != trace.SpanKindServer {
		t.Errorf("tool call span kind %v", byName["tools/call run_command"].SpanKind)
	}
	read := byName["store.read_copy"]
	if read.Parent.SpanID() != byName["tools/call read_tool_output"].SpanContext.SpanID() {
		t.Errorf("store.read_copy is not under the read_tool_output span")
	}
	if a := attrs(read); a["scrollback.offset"] == "" || a["scrollback.bytes"] == "" {
		t.Errorf("store.read_copy attributes: %v", a)
	}
	// An unknown id is a tool error; its span says which kind.
	res := call(t, cs, "read_tool_output", map[string]any{"id": "o_" + strings.Repeat("a", 26)})
	if !res.IsError {
		t.Fatal("an unknown id was read")
	}
	tp.ForceFlush(context.Background())
	last := exp.GetSpans()
	var found bool
	for _, s := range last[len(spans):] {
		if s.Name == "tools/call read_tool_output" {
			found = true
			if a := attrs(s); a["scrollback.outcome"] != "not_found" || a["error.type"] != "not_found" {
				t.Errorf("failed read's attributes: %v", a)
			}
		}
	}
	if !found {
		t.Error("no span for the failed read")
	}
}

// TestNoTracingNoSpans: an observer without a provider wraps nothing:
// the handler is the one given, and the store the observer's plain one.
func TestNoTracingNoSpans(t *testing.T) {
	obs := NewObserver(nil)
	obs.Trace(nil, nil)
	if obs.Tracing() {
		t.Fatal("tracing on without a provider")
	}
	if h := obs.traceHTTP(plainHandler{}); h != (plainHandler{}) {
		t.Errorf("traceHTTP wrapped the handler: %T", h)
	}
	if _, span := obs.storeSpan(context.Background(), "read_copy", "s"); span != nil {
		t.Error("a store span without a provider")
	}
}

type plainHandler struct{}

func (plainHandler) ServeHTTP(http.ResponseWriter, *http.Request) {}
