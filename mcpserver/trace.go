package mcpserver

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/scrollback-dev/scrollback/store"
)

// Tracing: when an Observer is given a tracer provider (Trace), it makes
// OpenTelemetry spans besides its logs and metrics: one per HTTP request to
// /mcp (continuing an incoming traceparent), one per MCP request under it,
// and one per store operation under that. Spans carry what a log line
// does: the method, the tool, the outcome, sizes, the session and the
// principal's name. Never output text, argument values (ids included) or
// tokens. Without a provider nothing is made and nothing is paid.

// tracerName names the instrumentation scope of scrollback's spans.
const tracerName = "github.com/scrollback-dev/scrollback/mcpserver"

// Attribute keys of scrollback's own, beside the semantic conventions'.
const (
	attrSession     = attribute.Key("scrollback.session")
	attrPrincipal   = attribute.Key("scrollback.principal")
	attrOutcome     = attribute.Key("scrollback.outcome")
	attrArgsBytes   = attribute.Key("scrollback.args_bytes")
	attrResultBytes = attribute.Key("scrollback.result_bytes")
	attrBytes       = attribute.Key("scrollback.bytes")
	attrOffset      = attribute.Key("scrollback.offset")
)

// Trace makes o trace with tp, reading incoming trace context with prop
// (nil: W3C traceparent and baggage). Call it before the server serves. A
// nil tp leaves tracing off.
func (o *Observer) Trace(tp trace.TracerProvider, prop propagation.TextMapPropagator) {
	if o == nil || tp == nil {
		return
	}
	if prop == nil {
		prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	o.tp, o.prop = tp, prop
	o.tracer = tp.Tracer(tracerName)
}

// Tracing reports whether o makes spans.
func (o *Observer) Tracing() bool { return o != nil && o.tracer != nil }

// traceHTTP wraps h to make a server span of each request, continuing the
// trace an incoming traceparent names. Off, it returns h.
func (o *Observer) traceHTTP(h http.Handler) http.Handler {
	if !o.Tracing() {
		return h
	}
	return otelhttp.NewHandler(h, "mcp",
		otelhttp.WithTracerProvider(o.tp),
		otelhttp.WithPropagators(o.prop),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + r.URL.Path }),
	)
}

// traceMCP wraps the handling of one MCP request in a span named as the
// MCP semantic conventions say ("tools/call run_command").
func (o *Observer) traceMCP(ctx context.Context, b *Binding, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	name := method
	attrs := []attribute.KeyValue{semconv.McpMethodNameKey.String(method)}
	argBytes := 0
	if ctr, ok := req.(*mcp.CallToolRequest); ok && ctr.Params != nil {
		tool := o.toolLabel(ctr.Params.Name)
		name += " " + tool
		argBytes = len(ctr.Params.Arguments)
		attrs = append(attrs, semconv.GenAIToolName(tool), semconv.GenAIOperationNameExecuteTool, attrArgsBytes.Int(argBytes))
	}
	if ss := req.GetSession(); ss != nil {
		if id := ss.ID(); id != "" {
			attrs = append(attrs, semconv.McpSessionIDKey.String(id))
		}
	}
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		attrs = append(attrs, attrPrincipal.String(TokenName(extra.TokenInfo)))
	}
	ctx, span := o.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	defer span.End()
	res, err := next(ctx, method, req)
	if b != nil {
		if s := b.Current(); s != nil {
			span.SetAttributes(attrSession.String(s.ID()))
		}
	}
	if method == "tools/call" {
		outcome, resultBytes := callOutcome(ctx, res, err)
		span.SetAttributes(attrOutcome.String(outcome), attrResultBytes.Int(resultBytes))
		if outcome != "ok" {
			span.SetAttributes(semconv.ErrorTypeKey.String(outcome))
			span.SetStatus(codes.Error, outcome)
		}
	} else if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String("protocol_error"))
		span.SetStatus(codes.Error, "protocol_error")
	}
	return res, err
}

// storeSpan starts the span of one store operation on session; end it
// with endStoreSpan. Off, it returns ctx and nil, and costs nothing: it
// takes no attributes to build (set them on the span when it is not nil).
func (o *Observer) storeSpan(ctx context.Context, op, session string) (context.Context, trace.Span) {
	if !o.Tracing() {
		return ctx, nil
	}
	return o.tracer.Start(ctx, "store."+op, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrSession.String(session)))
}

// endStoreSpan ends span (nil: tracing is off) with the operation's error
// and the bytes it moved.
func endStoreSpan(span trace.Span, bytes int64, err error) {
	if span == nil {
		return
	}
	if bytes >= 0 {
		span.SetAttributes(attrBytes.Int64(bytes))
	}
	if err != nil && !errors.Is(err, io.EOF) {
		kind := storeErrorType(err)
		span.SetStatus(codes.Error, kind)
		span.SetAttributes(semconv.ErrorTypeKey.String(kind))
	}
	span.End()
}

// storeErrorType names a store error's kind for a span, never its message
// (which may name ids).
func storeErrorType(err error) string {
	switch {
	case errors.Is(err, store.ErrCopyNotFound), errors.Is(err, store.ErrSessionNotFound):
		return "not_found"
	case errors.Is(err, store.ErrOffset):
		return "offset"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "cancelled"
	}
	return "store_error"
}
