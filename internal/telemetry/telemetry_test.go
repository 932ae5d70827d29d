package telemetry

import (
	"context"
	"errors"
	"testing"
)

// TestFromEnv: tracing is off unless the OTEL_* variables ask for it, and
// values it cannot honour are errors that name them.
func TestFromEnv(t *testing.T) {
	vars := []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"}
	for _, tc := range []struct {
		name     string
		env      map[string]string
		enabled  bool
		protocol string
		err      bool
	}{
		{"nothing", nil, false, "", false},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true, "http/protobuf", false},
		{"traces endpoint", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true, "http/protobuf", false},
		{"exporter otlp", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true, "http/protobuf", false},
		{"grpc", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, true, "grpc", false},
		{"traces protocol wins", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, true, "http/protobuf", false},
		{"none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false, "", false},
		{"disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, false, "", false},
		{"zipkin", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false, "", true},
		{"http/json", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, false, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range vars {
				t.Setenv(k, tc.env[k])
			}
			tr, err := FromEnv(context.Background(), "test")
			if tc.err {
				if !errors.Is(err, ErrConfig) {
					t.Fatalf("FromEnv: %v, want an ErrConfig", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Shutdown(context.Background())
			if tr.Enabled() != tc.enabled || tr.Protocol != tc.protocol {
				t.Errorf("enabled %v protocol %q, want %v %q", tr.Enabled(), tr.Protocol, tc.enabled, tc.protocol)
			}
		})
	}
}
