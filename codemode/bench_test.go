package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// smallTool returns a small object, like a read_tool_output page header.
var smallTool = Tool{Name: "small", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{"text":"hello","nextOffset":5,"totalBytes":5,"hasMore":false,"complete":true}`), nil
}}

// BenchmarkToolCallDirect is the baseline: calling the tool from Go.
func BenchmarkToolCallDirect(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		if _, err := smallTool.Call(ctx, json.RawMessage(`{"id":"x"}`)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToolCallBridge makes 1000 calls per run through the bridge; the
// per-call figure (ns/call) minus Direct is the bridge's overhead.
func BenchmarkToolCallBridge(b *testing.B) {
	const calls = 1000
	code := fmt.Sprintf("let n = 0; for (let i = 0; i < %d; i++) n += tools.small({id: 'x'}).totalBytes; return n", calls)
	for b.Loop() {
		res := Run(context.Background(), code, []Tool{smallTool}, Options{MaxCalls: calls})
		if res.Error != nil {
			b.Fatal(res.Error)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
}

// BenchmarkNestedRetained5MiB: one nested 5 MiB result saved by the bridge
// (into memory) and handed to the script.
func BenchmarkNestedRetained5MiB(b *testing.B) {
	big, _ := json.Marshal(strings.Repeat("0123456789abcdef\n", 5<<20/17))
	tool := Tool{Name: "big", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) { return big, nil }}
	var sink []byte
	save := func(ctx context.Context, c Copy) (string, error) { sink = c.Text; return "out_1", nil }
	for b.Loop() {
		res := Run(context.Background(), "return tools.big({}).slice(0, 100)", []Tool{tool}, Options{Save: save})
		if res.Error != nil || len(res.Retained) != 1 {
			b.Fatal(res.Error, res.Retained)
		}
	}
	_ = sink
}

// BenchmarkRuntimeStart: a run that does nothing, i.e. a fresh runtime
// with its tools, console and guards.
func BenchmarkRuntimeStart(b *testing.B) {
	tools := []Tool{smallTool, {Name: "a", Call: smallTool.Call}, {Name: "b", Call: smallTool.Call}}
	for b.Loop() {
		if res := Run(context.Background(), "return 1", tools, Options{}); res.Error != nil {
			b.Fatal(res.Error)
		}
	}
}
