package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"
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

// BenchmarkToolCallBridgeAwait is BenchmarkToolCallBridge with each call
// awaited, as models write it: the per-call figure includes the promise
// job that resumes the script.
func BenchmarkToolCallBridgeAwait(b *testing.B) {
	const calls = 1000
	code := fmt.Sprintf("let n = 0; for (let i = 0; i < %d; i++) n += (await tools.small({id: 'x'})).totalBytes; return n", calls)
	for b.Loop() {
		res := Run(context.Background(), code, []Tool{smallTool}, Options{MaxCalls: calls})
		if res.Error != nil {
			b.Fatal(res.Error)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
}

// script2KiB is a TypeScript script of about 2 KiB, as a model writes one.
var script2KiB = func() string {
	s := `interface Match { line: number; offset: number; text: string }
type Summary = { file: string; errors: number; first?: Match };
enum Severity { Info, Warn, Error }
async function scan(id: string): Promise<Match[]> {
  const out: Match[] = [];
  let offset = 0;
  for (;;) {
    const r = await tools.grep_tool_output({id, pattern: "error|panic", offset});
    out.push(...(r.matches ?? []));
    if (!r.hasMore) break;
    offset = r.nextOffset;
  }
  return out;
}
`
	for i := 0; len(s) < 2000; i++ {
		s += fmt.Sprintf("const r%d = await tools.run_command({command: `grep -c error log%d.txt`});\nconst n%d: number = Number(r%d.preview.trim()) as number;\n", i, i, i, i)
	}
	return s + "return {done: true} as Summary | {done: boolean};\n"
}()

// BenchmarkTranspile2KiB: compiling a 2 KiB TypeScript script as Run does
// (esbuild's transform, then goja's parse and compile).
func BenchmarkTranspile2KiB(b *testing.B) {
	b.SetBytes(int64(len(script2KiB)))
	for b.Loop() {
		if _, _, err := compile(script2KiB); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTranspile2KiBEsbuildOnly: esbuild's transform alone.
func BenchmarkTranspile2KiBEsbuildOnly(b *testing.B) {
	for b.Loop() {
		if _, _, err := transpile(script2KiB); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompile2KiBGojaOnly is the reference for BenchmarkTranspile2KiB:
// goja compiling the same script already in JavaScript, without esbuild.
func BenchmarkCompile2KiBGojaOnly(b *testing.B) {
	js, _, e := transpile(script2KiB)
	if e != nil {
		b.Fatal(e)
	}
	for b.Loop() {
		if _, err := goja.Compile(scriptName, js, false); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRuntimeStartGojaOnly is the reference for BenchmarkRuntimeStart:
// a bare goja runtime running "return 1", without the tools, console,
// polyfills, guards or esbuild.
func BenchmarkRuntimeStartGojaOnly(b *testing.B) {
	for b.Loop() {
		vm := goja.New()
		if _, err := vm.RunString("(function() { return 1 })()"); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPool is a pool of one warm worker for the worker benchmarks.
func benchPool(b *testing.B) *Pool {
	p := NewPool(PoolOptions{Size: 1})
	b.Cleanup(func() { p.Close() })
	return p
}

// warmRun runs code in a warm worker: the timer stops while the pool
// starts the next one, as between a model's calls.
func warmRun(b *testing.B, p *Pool, code string, tools []Tool, opts Options) Result {
	b.StopTimer()
	for len(p.ready) == 0 {
		time.Sleep(100 * time.Microsecond)
	}
	b.StartTimer()
	return p.Run(context.Background(), code, tools, opts)
}

// BenchmarkPoolWarmStart: "return 1" in a warm worker (the round trip
// over the pipe, the worker's esbuild and goja start, the process's end).
// Its reference is BenchmarkRuntimeStart, the same in this process.
func BenchmarkPoolWarmStart(b *testing.B) {
	p := benchPool(b)
	tools := []Tool{smallTool, {Name: "a", Call: smallTool.Call}, {Name: "b", Call: smallTool.Call}}
	for b.Loop() {
		if res := warmRun(b, p, "return 1", tools, Options{}); res.Error != nil {
			b.Fatal(res.Error)
		}
	}
}

// BenchmarkPoolToolCallAwait: 1000 awaited tool calls in a worker, each
// over the pipe to the server and back. ns/call minus
// BenchmarkToolCallBridgeAwait's is what the pipe adds to a call.
func BenchmarkPoolToolCallAwait(b *testing.B) {
	const calls = 1000
	p := benchPool(b)
	code := fmt.Sprintf("let n = 0; for (let i = 0; i < %d; i++) n += (await tools.small({id: 'x'})).totalBytes; return n", calls)
	for b.Loop() {
		if res := warmRun(b, p, code, []Tool{smallTool}, Options{MaxCalls: calls}); res.Error != nil {
			b.Fatal(res.Error)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
}

// BenchmarkPoolTranspile2KiB: a 2 KiB TypeScript script, transpiled and
// compiled in a warm worker, that returns at once. Minus
// BenchmarkPoolWarmStart, it is the transpile's cost in a worker.
func BenchmarkPoolTranspile2KiB(b *testing.B) {
	p := benchPool(b)
	code := "if (Date.now() > 0) return 1;\n" + script2KiB
	for b.Loop() {
		if res := warmRun(b, p, code, nil, Options{}); res.Error != nil {
			b.Fatal(res.Error)
		}
	}
}
