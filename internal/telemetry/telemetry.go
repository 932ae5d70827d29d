// Package telemetry sets up OpenTelemetry tracing for the servers, from the
// standard OTEL_* environment variables only, with the official Go SDK and
// its OTLP exporters. With nothing configured it sets up nothing: the
// servers then make no spans at all.
//
// What turns tracing on:
//
//   - OTEL_TRACES_EXPORTER=otlp, or an endpoint in
//     OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
//   - and not OTEL_SDK_DISABLED=true nor OTEL_TRACES_EXPORTER=none.
//
// The exporter's protocol is OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else
// OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf; grpc is the other one.
// The exporters read their own variables (endpoint, headers, timeout,
// TLS); the SDK reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG,
// and OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES name the service
// (default "scrollback"). Incoming W3C traceparent and baggage headers are
// honoured.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is the tracing a server was set up with.
type Tracing struct {
	// Provider makes the server's tracers; nil when tracing is off.
	Provider trace.TracerProvider
	// Propagator reads incoming trace context (traceparent, baggage).
	Propagator propagation.TextMapPropagator
	// Protocol is the OTLP protocol spans are exported with.
	Protocol string
	// Shutdown flushes the spans not yet exported and stops the exporter.
	Shutdown func(context.Context) error
}

// Enabled reports whether spans are made.
func (t *Tracing) Enabled() bool { return t != nil && t.Provider != nil }

// Off is the Tracing of a server with nothing configured.
var Off = &Tracing{Shutdown: func(context.Context) error { return nil }}

// ErrConfig is the error of environment variables that ask for what
// cannot be done.
var ErrConfig = errors.New("telemetry")

// FromEnv sets up tracing as the process's OTEL_* variables say, naming
// the service's version. It returns Off when they ask
// for none, and an error wrapping ErrConfig for values it cannot honour.
// It also installs the provider and propagator as OpenTelemetry's globals,
// for libraries that trace with them.
func FromEnv(ctx context.Context, version string) (*Tracing, error) {
	env := func(k string) string { return strings.TrimSpace(os.Getenv(k)) }
	if strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") {
		return Off, nil
	}
	switch exp := strings.ToLower(env("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return Off, nil
	case "":
		if env("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return Off, nil
		}
	case "otlp":
	default:
		return nil, fmt.Errorf("%w: OTEL_TRACES_EXPORTER=%s: this server exports otlp or none", ErrConfig, exp)
	}
	protocol := env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if protocol == "" {
		protocol = env("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if protocol == "" {
		protocol = "http/protobuf"
	}
	var (
		exporter sdktrace.SpanExporter
		err      error
	)
	switch protocol {
	case "http/protobuf":
		exporter, err = otlptracehttp.New(ctx)
	case "grpc":
		exporter, err = otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("%w: OTLP protocol %q: this server speaks http/protobuf or grpc", ErrConfig, protocol)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: the OTLP %s exporter: %v", ErrConfig, protocol, err)
	}
	// Later detectors win: the service's defaults first, then what the
	// environment says (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).
	res, err := resource.New(ctx,
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName("scrollback"), semconv.ServiceVersion(version)),
		resource.WithFromEnv(),
	)
	if err != nil && res == nil {
		return nil, fmt.Errorf("%w: the resource: %v", ErrConfig, err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(prop)
	return &Tracing{Provider: tp, Propagator: prop, Protocol: protocol, Shutdown: tp.Shutdown}, nil
}
