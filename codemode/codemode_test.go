package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/present"
)

// saver records what the bridge saves, as a store would.
type saver struct {
	copies map[string]Copy
	fail   error
}

func newSaver() *saver { return &saver{copies: map[string]Copy{}} }

func (s *saver) save(ctx context.Context, c Copy) (string, error) {
	if s.fail != nil {
		return "", s.fail
	}
	id := fmt.Sprintf("out_%d", len(s.copies)+1)
	s.copies[id] = c
	return id, nil
}

func jsonTool(name string, result any) Tool {
	return Tool{Name: name, Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return json.Marshal(result)
	}}
}

func echoTool() Tool {
	return Tool{Name: "echo", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return args, nil
	}}
}

func TestRunValues(t *testing.T) {
	tests := []struct {
		name, code string
		want       string // Result.Value
		none       bool   // no value at all
	}{
		{"string as itself", `return "hi\nthere"`, "hi\nthere", false},
		{"object as JSON", `return {a: 1, b: [true, null]}`, `{"a":1,"b":[true,null]}`, false},
		{"number", `return 6 * 7`, `42`, false},
		{"null", `return null`, `null`, false},
		{"undefined", `const x = 1;`, "", true},
		{"tool result unchanged", `const r = tools.echo({x: [1, 2, {y: "z"}]}); return r`, `{"x":[1,2,{"y":"z"}]}`, false},
		{"no argument is {}", `return tools.echo()`, `{}`, false},
		{"top-level return in a branch", "if (true) {\n  return 'early'\n}\nreturn 'late'", "early", false},
		{"utf-8 kept", `return "héllo, 世界"`, "héllo, 世界", false},
		// JSON.stringify shows a Map or a Set as {}, which reads as empty:
		// the value shows what they hold.
		{"map", `return {m: new Map([["a", 1], ["b", [2]]])}`, `{"m":{"a":1,"b":[2]}}`, false},
		{"map with object keys", `return new Map([[{k: 1}, "v"]])`, `[[{"k":1},"v"]]`, false},
		{"set", `return {s: new Set([1, "x"])}`, `{"s":[1,"x"]}`, false},
		{"empty map", `return new Map()`, `{}`, false},
		// A BigInt has no JSON form: a number when it is exact, else its digits.
		{"bigint", `return {n: 10n, big: 2n ** 64n}`, `{"n":10,"big":"18446744073709551616"}`, false},
		{"own toJSON wins", `Map.prototype.toJSON = function() { return "mine" }; return new Map([["a", 1]])`, `"mine"`, false},
		// An Error has no enumerable properties: JSON.stringify shows {}.
		{"error", `return {e: new Error("x")}`, `{"e":{"name":"Error","message":"x"}}`, false},
		{"error subclass with a cause", `return [new TypeError("bad", {cause: "c"})]`, `[{"name":"TypeError","message":"bad","cause":"c"}]`, false},
		{"error with own fields", `const e = new Error("x"); e.code = 7; return {e}`, `{"e":{"name":"Error","message":"x","code":7}}`, false},
		{"caught error", `try { undefined.x } catch (e) { return {e} }`, `{"e":{"name":"TypeError","message":"Cannot read property 'x' of undefined"}}`, false},
		// goja gives no groups for named groups, and reads a locale as a radix.
		{"named group by exec", `return /(?<y>\d{4})/.exec("in 2024").groups.y`, "2024", false},
		{"named groups by match", `return "2024-05".match(/(?<y>\d+)-(?<m>\d+)/).groups`, `{"y":"2024","m":"05"}`, false},
		{"named groups by matchAll", `return [..."a1b2".matchAll(/[a-z](?<d>\d)/g)].map(m => m.groups.d)`, `["1","2"]`, false},
		{"named groups in a replacement", `return "2024-05".replace(/(?<y>\d+)-(?<m>\d+)/, "$<m>/$<y>")`, "05/2024", false},
		{"named groups to a replacer", `return "2024-05".replace(/(?<y>\d+)-(?<m>[\d(]+)/, (...a) => a[a.length - 1].m)`, "05", false},
		{"unnamed groups unchanged", `return [/(a)(b)/.exec("ab").groups, "ab".replace(/(a)/, "$1$1")]`, `[null,"aab"]`, false},
		{"toLocaleString en-US", `return [(1234.5).toLocaleString('en-US'), (1234567.891).toLocaleString(), (-0.5).toLocaleString('en-US'), (12).toLocaleString('en-US', {minimumFractionDigits: 2}), (1e21).toLocaleString('en-US')]`,
			`["1,234.5","1,234,567.891","-0.5","12.00","1,000,000,000,000,000,000,000"]`, false},
		// esbuild lowers decorators and using, which goja cannot parse.
		{"class decorator", "function dec(c: any, ctx: any) { ctx.addInitializer(function() { this.tag = 'x' }) }\n@dec class A { static tag: string }\nreturn A.tag", "x", false},
		{"method decorator", "function logged(fn: any, ctx: any) { return function(...a: any[]) { return 'logged ' + fn.apply(this, a) } }\nclass A { @logged m() { return 1 } }\nreturn new A().m()", "logged 1", false},
		{"using", "const log: string[] = [];\n{ using x = {[Symbol.dispose]() { log.push('disposed') }}; log.push('in') }\nreturn log", `["in","disposed"]`, false},
		{"await using", "const log: string[] = [];\n{ await using x = {async [Symbol.asyncDispose]() { log.push('disposed') }}; log.push('in') }\nreturn log", `["in","disposed"]`, false},
		{"script's JSON.stringify unchanged", `return JSON.stringify({m: new Map([["a", 1]])})`, `{"m":{}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(context.Background(), tt.code, []Tool{echoTool()}, Options{})
			if res.Error != nil {
				t.Fatalf("error: %v", res.Error)
			}
			if tt.none != (res.Value == nil) || string(res.Value) != tt.want {
				t.Errorf("value = %q (nil %v), want %q", res.Value, res.Value == nil, tt.want)
			}
			if res.Retained == nil || len(res.Retained) != 0 {
				t.Errorf("retained = %#v, want []", res.Retained)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	tests := []struct {
		name, code   string
		kind         string
		sentinel     error
		line, column int // 0: not checked
		msg          string
	}{
		{"thrown error", "const a = 1;\nconst b = 2;\n  throw new Error('boom');", "exception", ErrThrown, 3, 9, "Error: boom"},
		{"thrown object", "throw {code: 7}", "exception", ErrThrown, 0, 0, `uncaught {"code":7} (a thrown value that is not an Error has no line`},
		{"thrown string", "const a = 1;\nthrow 'boom'", "exception", ErrThrown, 0, 0, `uncaught "boom" (a thrown value that is not an Error has no line: throw new Error(...) to get one)`},
		{"thrown number", "throw 42", "exception", ErrThrown, 0, 0, `uncaught 42`},
		// A thrown value that cannot be read (its toString, message or
		// stack throws) is still the script's error, said plainly, not an
		// internal error quoting positions in the generated JavaScript.
		{"thrown Error whose stack getter throws", "const e = new Error('x');\nObject.defineProperty(e, 'stack', {get() { throw new Error('st') }});\nthrow e", "exception", ErrThrown, 0, 0, "Error: x"},
		{"thrown Error whose message getter throws", "const e = new Error('x');\nObject.defineProperty(e, 'message', {get() { throw new Error('m') }});\nthrow e", "exception", ErrThrown, 0, 0, "cannot be shown"},
		{"thrown Error whose toString throws", "const e = new Error('x');\ne.toString = () => { throw new Error('ts') };\nthrow e", "exception", ErrThrown, 0, 0, "cannot be shown"},
		{"thrown Proxy", "throw new Proxy({}, {get() { throw new Error('p') }, ownKeys() { throw new Error('k') }})", "exception", ErrThrown, 0, 0, "cannot be shown"},
		{"rejected with a toString that throws", "await Promise.reject({toString() { throw new Error('ts') }, toJSON() { throw new Error('tj') }})", "exception", ErrThrown, 0, 0, "cannot be shown"},
		{"type error", "let x;\nx.y.z = 1", "exception", ErrThrown, 2, 0, "TypeError"},
		{"syntax error", "const a = 1;\nconst = 2;", "syntax", ErrSyntax, 2, 0, "SyntaxError"},
		{"escaping the wrapper", "return 1;\n}); (function() {", "syntax", ErrSyntax, 2, 0, "closes the function"},
		{"unclosed brace", "if (true) {\nreturn 1", "syntax", ErrSyntax, 2, 0, "SyntaxError"},
		{"deep recursion", "function f(n) { return f(n + 1) + 1 }\nreturn f(0)", "stack", ErrStack, 1, 0, "maximum call stack"},
		{"run_code refused", "tools.run_code({code: 'return 1'})", "exception", ErrThrown, 1, 0, "cannot be called from inside run_code"},
		{"tool error thrown", "tools.fail({})", "exception", ErrThrown, 1, 0, "tools.fail: nope"},
		{"bad argument", "tools.echo('x')", "exception", ErrThrown, 1, 0, "takes one object argument"},
		{"locale other than en-US", "return (1.5).toLocaleString('de-DE')", "exception", ErrThrown, 1, 0, "RangeError: toLocaleString: Code Mode has no Intl; it formats numbers for en-US only"},
		{"unknown tool", "tools.nosuch({})", "exception", ErrThrown, 1, 0, "TypeError: tools has no tool nosuch; the tools are echo, fail"},
		{"unknown tool, awaited", "const x = 1;\nconst r = await tools.bash({command: 'ls'});", "exception", ErrThrown, 2, 0, "tools has no tool bash; the tools are echo, fail"},
		{"no member of another object", "const o = {};\no.nosuch()", "exception", ErrThrown, 2, 0, "TypeError: Object has no member 'nosuch'"},
		{"not serializable", "const a = {}; a.a = a; return a", "result", ErrResult, 0, 0, "cannot be turned into JSON"},
		// A function has no JSON form: the run says so rather than that
		// the script returned nothing.
		{"function returned", "return function() {}", "result", ErrResult, 0, 0, "the return value is a function"},
		{"tool returned uncalled", "return tools.echo", "result", ErrResult, 0, 0, "the return value is a function"},
		{"symbol returned", "return Symbol('x')", "result", ErrResult, 0, 0, "the return value is a symbol"},
		// A getter that throws while the value is turned into JSON is the
		// value's failure, at the getter's line, not an internal error.
		{"getter throws in the value", "const o = {\n  get x() { throw new Error('g') }\n};\nreturn o", "result", ErrResult, 2, 19, "the return value cannot be turned into JSON: Error: g"},
		{"getter fails in an array", "const o = {get x() { return null.y }};\nreturn [o]", "result", ErrResult, 0, 0, "the return value cannot be turned into JSON: TypeError"},
		{"defined getter throws", "const o = {};\nObject.defineProperty(o, 'x', {get() { throw new Error('g') }, enumerable: true});\nreturn o", "result", ErrResult, 2, 0, "cannot be turned into JSON: Error: g"},
		// What a script cannot have says what to do instead.
		{"no require", "require('fs')", "exception", ErrThrown, 1, 0, "ReferenceError: require is not defined: Code Mode has no modules; call the tools as tools.NAME(...)"},
		{"no timers", "setTimeout(() => 1, 10)", "exception", ErrThrown, 1, 0, "ReferenceError: setTimeout is not defined: Code Mode has no timers"},
		{"no setInterval", "const x = 1;\nsetInterval(() => 1, 10)", "exception", ErrThrown, 2, 0, "ReferenceError: setInterval is not defined: Code Mode has no timers"},
		{"no fetch", "await fetch('https://example.com')", "exception", ErrThrown, 1, 0, "ReferenceError: fetch is not defined: Code Mode has no network access of its own; call a tool that has it"},
		{"no import", "import fs from 'fs';\nreturn 1", "syntax", ErrSyntax, 1, 0, "SyntaxError: import and export are not available: a script is the body of one async function, with no modules; call the tools as tools.NAME(...)"},
		{"no import of names", "const a = 1;\nimport { readFile } from 'fs';", "syntax", ErrSyntax, 2, 0, "SyntaxError: import and export are not available"},
		{"no export", "export const a = 1;\nreturn a", "syntax", ErrSyntax, 1, 0, "SyntaxError: import and export are not available"},
		{"no dynamic import", "const m = await import('fs');", "syntax", ErrSyntax, 1, 0, "SyntaxError: import and export are not available"},
		// tools.a-b reads as tools.a - b.
		{"hyphenated tool", "return tools.get-page({})", "exception", ErrThrown, 1, 0, `write tools["get-page"](...)`},
		{"hyphenated tool, page defined", "const page = 1;\nreturn tools.get-page({})", "exception", ErrThrown, 2, 0, `write tools["get-page"](...)`},
	}
	fail := Tool{Name: "fail", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("fail: nope")
	}}
	dashed := Tool{Name: "get-page", Call: echoTool().Call}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(context.Background(), tt.code, []Tool{echoTool(), fail, dashed}, Options{})
			e := res.Error
			if e == nil {
				t.Fatalf("no error; value %q", res.Value)
			}
			if e.Kind != tt.kind || !errors.Is(e, tt.sentinel) {
				t.Errorf("kind %q (%v), want %q (%v)", e.Kind, e.Err, tt.kind, tt.sentinel)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("message %q does not contain %q", e.Message, tt.msg)
			}
			if tt.line != 0 && e.Line != tt.line {
				t.Errorf("line %d, want %d (%s)", e.Line, tt.line, e.Message)
			}
			if tt.column != 0 && e.Column != tt.column {
				t.Errorf("column %d, want %d", e.Column, tt.column)
			}
		})
	}
}

// TestThrownValueStoppedWhileShown: a thrown Error whose toString never
// ends is stopped by the run's timeout while the run reads it; that is
// the timeout, not an internal error.
func TestThrownValueStoppedWhileShown(t *testing.T) {
	res := Run(t.Context(), "const e = new Error('x');\ne.toString = () => { while (true) {} };\nthrow e", nil, Options{Timeout: 200 * time.Millisecond})
	if e := res.Error; e == nil || e.Kind != "timeout" || !errors.Is(e, ErrTimeout) || strings.Contains(e.Message, "internal error") {
		t.Fatalf("error %+v, want the timeout", e)
	}
}

func TestSandbox(t *testing.T) {
	res := Run(context.Background(), `return [typeof require, typeof process, typeof setTimeout, typeof setInterval,
		typeof fetch, typeof XMLHttpRequest, typeof module, typeof exports, typeof __dirname, typeof Deno, typeof print].join(",")`, nil, Options{})
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	want := strings.TrimSuffix(strings.Repeat("undefined,", 11), ",")
	if string(res.Value) != want {
		t.Errorf("globals: %s", res.Value)
	}
}

func TestLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("memory and time limits take a few seconds")
	}
	// A small memory limit keeps the test quick. A busy machine must not
	// turn a memory stop into a timeout: the memory cases get all the time
	// they need, and the timeout only catches a limit that never fires
	// (bench/codemode measures how fast it fires).
	small := Options{MaxMemory: 32 << 20, Timeout: 10 * time.Minute}
	tests := []struct {
		name, code string
		opts       Options
		kind       string
	}{
		{"infinite loop", "while (true) {}", Options{Timeout: 200 * time.Millisecond}, "timeout"},
		{"doubling string", "let s = 'x';\nwhile (true) s += s;", small, "memory"},
		{"growing array", "const a = [];\nwhile (true) a.push([1, 2, 3, 4, 5, 6, 7, 8]);", small, "memory"},
		{"growing objects", "const a = [];\nfor (let i = 0; ; i++) a.push({id: i, name: 'item ' + i, tags: [i, i + 1]});", small, "memory"},
		{"typed arrays", "const a = [];\nwhile (true) a.push(new Float64Array(1 << 20));", small, "memory"},
		{"doubling string, async", "let s = 'x';\nwhile (true) { s += s; await null; }", small, "memory"},
		{"infinite loop in an async helper", "async function spin() { while (true) {} }\nawait spin();", Options{Timeout: 200 * time.Millisecond}, "timeout"},
		{"microtask loop", "for (;;) await null;", Options{Timeout: 200 * time.Millisecond}, "timeout"},
		{"promise chain loop", "const loop = (): Promise<void> => Promise.resolve().then(loop);\nawait loop();", Options{Timeout: 200 * time.Millisecond}, "timeout"},
		{"huge repeat", "return 'x'.repeat(2 ** 30).length", Options{}, "exception"},
		{"huge padEnd", "return 'x'.padEnd(2 ** 30).length", Options{}, "exception"},
		{"huge array", "return new Array(2 ** 28).fill(0).length", Options{}, "exception"},
		{"huge array via literal", "const a = []; a.length = 2 ** 30; return a.fill(1).length", Options{}, "exception"},
		{"huge array from", "return Array.from({length: 2 ** 30}).length", Options{}, "exception"},
		{"huge buffer", "return new Float64Array(2 ** 30).length", Options{}, "exception"},
		{"too many calls", "for (;;) tools.echo({})", Options{MaxCalls: 50}, "calls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res := Run(context.Background(), tt.code, []Tool{echoTool()}, tt.opts)
			took := time.Since(start)
			if res.Error == nil {
				t.Fatalf("no error; value %q", res.Value)
			}
			if res.Error.Kind != tt.kind {
				t.Errorf("kind %q (%s), want %q", res.Error.Kind, res.Error.Message, tt.kind)
			}
			if res.Error.Kind != "exception" && res.Error.Line == 0 {
				t.Errorf("no line for %s", res.Error.Message)
			}
			t.Logf("%v: %s", took, res.Error)
		})
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	res := Run(ctx, "while (true) {}", nil, Options{})
	if res.Error == nil || !errors.Is(res.Error, ErrCanceled) {
		t.Fatalf("error %v, want canceled", res.Error)
	}
}

func TestLimitsKeepLogsAndRetained(t *testing.T) {
	s := newSaver()
	big := strings.Repeat("y", DefaultBudget+1)
	code := "console.log('before');\nlet n = 0, r = tools.big({});\nwhile (true) { n++ }"
	// The timeout must fire in the loop, after the log and the call: a busy
	// machine can make 100 ms too short for those, and then the run is
	// made again with a timeout twice as long.
	var res Result
	for timeout := 100 * time.Millisecond; ; timeout *= 2 {
		s = newSaver()
		res = Run(context.Background(), code, []Tool{jsonTool("big", big)}, Options{Save: s.save, Timeout: timeout})
		if res.Error == nil || res.Error.Kind != "timeout" || res.Error.Line == 3 || timeout > 10*time.Second {
			break
		}
		t.Logf("the %v timeout fired on line %d, before the loop; again with a longer one", timeout, res.Error.Line)
	}
	if res.Error == nil || res.Error.Kind != "timeout" || res.Error.Line != 3 {
		t.Fatalf("error %+v, want a timeout on line 3", res.Error)
	}
	if res.Logs != "before\n" {
		t.Errorf("logs %q", res.Logs)
	}
	if len(res.Retained) != 1 || res.Retained[0].OutputID == "" {
		t.Errorf("retained %+v, want the big result's copy", res.Retained)
	}
}

func TestBridge(t *testing.T) {
	budget := 1000
	small := strings.Repeat("s", budget)                       // exactly the budget: not copied
	large := strings.Repeat("é", budget)                       // 2000 bytes as text
	obj := map[string]any{"rows": strings.Repeat("r", budget)} // over as JSON
	own := map[string]any{"preview": "short", "output_id": "out_cmd", "totalBytes": 8 << 20, "complete": false}
	tools := []Tool{jsonTool("small", small), jsonTool("large", large), jsonTool("obj", obj), jsonTool("own", own)}

	tests := []struct {
		name, code string
		want       []Ref
		value      string
	}{
		{"small result not copied", `return tools.small({}).length`, nil, "1000"},
		{"large string saved as text, script gets it whole", `const r = tools.large({}); return r.slice(0, 3) + r.length`,
			[]Ref{{Call: 1, Tool: "large", OutputID: "out_1", TotalBytes: 2000, Complete: true, Holds: present.HoldsResult}}, "ééé1000"},
		{"large object saved as JSON", `tools.small({}); return Object.keys(tools.obj({}))`,
			[]Ref{{Call: 2, Tool: "obj", OutputID: "out_1", TotalBytes: int64(len(`{"rows":""}`) + budget), Complete: true, Holds: present.HoldsResult}}, `["rows"]`},
		{"a tool's own copy is listed, with the command it ran", `return tools.own({command: "make test"}).preview`,
			[]Ref{{Call: 1, Tool: "own", OutputID: "out_cmd", TotalBytes: 8 << 20, Complete: false, Holds: present.HoldsOutput, Command: "make test"}}, "short"},
		{"dropped results still listed", `tools.large({}); tools.large({}); return "nothing"`,
			[]Ref{{Call: 1, Tool: "large", OutputID: "out_1", TotalBytes: 2000, Complete: true, Holds: present.HoldsResult},
				{Call: 2, Tool: "large", OutputID: "out_2", TotalBytes: 2000, Complete: true, Holds: present.HoldsResult}}, "nothing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSaver()
			res := Run(context.Background(), tt.code, tools, Options{Save: s.save, Budget: budget})
			if res.Error != nil {
				t.Fatal(res.Error)
			}
			if string(res.Value) != tt.value {
				t.Errorf("value %q, want %q", res.Value, tt.value)
			}
			if tt.want == nil {
				tt.want = []Ref{}
			}
			if fmt.Sprint(res.Retained) != fmt.Sprint(tt.want) {
				t.Errorf("retained %+v\nwant     %+v", res.Retained, tt.want)
			}
			for _, r := range res.Retained {
				if c, ok := s.copies[r.OutputID]; ok && int64(len(c.Text)) != r.TotalBytes {
					t.Errorf("copy %s holds %d bytes, ref says %d", r.OutputID, len(c.Text), r.TotalBytes)
				}
			}
		})
	}
}

func TestBridgeCopyCapAndSaveFailure(t *testing.T) {
	big := strings.Repeat("€", 1000) // 3000 bytes
	s := newSaver()
	res := Run(context.Background(), `return tools.big({}).length`, []Tool{jsonTool("big", big)},
		Options{Save: s.save, Budget: 100, CopyCap: 1000})
	if res.Error != nil || string(res.Value) != "1000" {
		t.Fatalf("value %q, error %v: the script must get the whole value", res.Value, res.Error)
	}
	r := res.Retained[0]
	if r.Complete || r.TotalBytes != 999 || string(s.copies[r.OutputID].Text) != strings.Repeat("€", 333) {
		t.Errorf("capped copy: %+v", r)
	}

	s.fail = errors.New("disk full")
	res = Run(context.Background(), `return tools.big({}).length`, []Tool{jsonTool("big", big)}, Options{Save: s.save, Budget: 100})
	if res.Error != nil || string(res.Value) != "1000" {
		t.Fatalf("value %q, error %v", res.Value, res.Error)
	}
	if len(res.Retained) != 1 || res.Retained[0].OutputID != "" || !strings.Contains(res.Retained[0].RecoveryError, "disk full") {
		t.Errorf("failed save: %+v", res.Retained)
	}
}

func TestLogs(t *testing.T) {
	res := Run(context.Background(), `console.log("a", 1, {b: [2]}, undefined, null); console.warn("w"); console.error(new Error("e")); return 0`, nil, Options{})
	want := "a 1 {\"b\":[2]} undefined null\nwarn: w\nerror: Error: e\n"
	if res.Logs != want {
		t.Errorf("logs %q, want %q", res.Logs, want)
	}
	res = Run(context.Background(), `console.log(new Map([["a", 1]]), new Set([2]), 3n, {n: 4n}); return 0`, nil, Options{})
	want = "{\"a\":1} [2] 3 {\"n\":4}\n"
	if res.Logs != want {
		t.Errorf("logs %q, want %q", res.Logs, want)
	}

	res = Run(context.Background(), `for (let i = 0; i < 10000; i++) console.log("line " + i + " ünïcödé"); return 1`, nil, Options{MaxLogBytes: 1000})
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	body, note, ok := strings.Cut(res.Logs, "[console output cut at 1000 bytes")
	if !ok || len(body) > 1001 || !strings.HasPrefix(body, "line 0 ") || !strings.Contains(note, "not kept") {
		t.Errorf("bounded logs: %d bytes, %q", len(res.Logs), res.Logs[max(0, len(res.Logs)-200):])
	}
	if !isValidUTF8(res.Logs) {
		t.Error("logs cut inside a character")
	}
}

func TestValueCap(t *testing.T) {
	res := Run(context.Background(), `return "ü".repeat(1000)`, nil, Options{CopyCap: 101})
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	if res.Complete || len(res.Value) != 100 {
		t.Errorf("value %d bytes, complete %v", len(res.Value), res.Complete)
	}
}

func TestToolGetsContextAndArgs(t *testing.T) {
	var got string
	tool := Tool{Name: "t", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		if _, ok := ctx.Deadline(); !ok {
			return nil, errors.New("no deadline")
		}
		got = string(args)
		return json.RawMessage(`"ok"`), nil
	}}
	res := Run(context.Background(), `return tools.t({command: "ls", n: 1})`, []Tool{tool}, Options{})
	if res.Error != nil || string(res.Value) != "ok" || got != `{"command":"ls","n":1}` || res.Calls != 1 {
		t.Errorf("value %q err %v args %q calls %d", res.Value, res.Error, got, res.Calls)
	}
}

func TestCompile(t *testing.T) {
	if err := Compile("return 1"); err != nil {
		t.Error(err)
	}
	var e *Error
	if err := Compile("return ("); !errors.As(err, &e) || e.Kind != "syntax" || e.Line != 1 {
		t.Errorf("Compile: %v", err)
	}
}

func isValidUTF8(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

func TestToolPanicIsAnError(t *testing.T) {
	bad := Tool{Name: "bad", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		var m map[string]int
		m["x"] = 1 // panics
		return nil, nil
	}}
	res := Run(context.Background(), "console.log('a'); return tools.bad({})", []Tool{bad}, Options{})
	if res.Error == nil || !strings.Contains(res.Error.Message, "internal error") || res.Logs != "a\n" || res.Retained == nil {
		t.Fatalf("result %+v", res)
	}
}

// Garbage made by the rest of the process (other requests of a busy
// server) does not count against a script: the sampler collects it before
// blaming the script.
func TestMemoryLimitIgnoresOthersGarbage(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates a few hundred MiB")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(2000)) // let garbage pile up, as a busy server's does
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var sink []byte
		for {
			select {
			case <-stop:
				_ = sink
				return
			case <-time.After(2 * time.Millisecond):
				// A busy server's garbage: 4 MiB every 2 ms, 2 GB/s. A
				// goroutine allocating flat out on a core of its own during
				// the collection is beyond what the watch can tell from the
				// script's growth (see memoryWatch).
				sink = make([]byte, 4<<20)
				sink[0] = 1
			}
		}
	}()
	res := Run(context.Background(), "const end = Date.now() + 400; let n = 0; while (Date.now() < end) n++; return 'done';",
		nil, Options{MaxMemory: 64 << 20})
	close(stop)
	<-done
	if res.Error != nil || string(res.Value) != "done" {
		t.Fatalf("the script was stopped for garbage that was not its own: %v", res.Error)
	}
}

// JSON.parse of a result's preview, cut by scrollback, says that it is a
// preview and names the copy that holds the whole text; other parse
// errors, and what parses, are as JavaScript has them.
func TestJSONParseOfPreview(t *testing.T) {
	preview := "[\n{\"a\": 1},\n[... 120 bytes (3 whole lines) not shown, of 150 bytes in 5 lines.\nRead on: read_tool_output {\"id\":\"out_abc123\",\"offset\":12}]\n{\"a\": 5}\n]"
	tool := jsonTool("cut", map[string]any{"preview": preview, "output_id": "out_abc123"})
	tests := []struct {
		name, code, want string
		kind             string
	}{
		{"preview", "const r = tools.cut({});\nreturn JSON.parse(r.preview);", "tools.query_tool_output({id: \"out_abc123\"", "exception"},
		{"not a preview", "return JSON.parse('{\"a\": ');", "SyntaxError", "exception"},
		{"valid JSON", `return JSON.parse('{"a": [1, 2]}', (k, v) => typeof v === "number" ? v * 10 : v)`, `{"a":[10,20]}`, ""},
		{"caught", "try { JSON.parse(tools.cut({}).preview) } catch (e) { return e instanceof SyntaxError }", "true", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(context.Background(), tt.code, []Tool{tool}, Options{})
			if tt.kind == "" {
				if res.Error != nil || string(res.Value) != tt.want {
					t.Fatalf("value %q, error %v; want %q", res.Value, res.Error, tt.want)
				}
				return
			}
			if res.Error == nil || res.Error.Kind != tt.kind || !strings.Contains(res.Error.Message, tt.want) {
				t.Fatalf("error %+v, want %s with %q", res.Error, tt.kind, tt.want)
			}
			if tt.name == "not a preview" && strings.Contains(res.Error.Message, "preview") {
				t.Errorf("a plain parse error speaks of a preview: %s", res.Error.Message)
			}
			if tt.name == "preview" && res.Error.Line != 2 {
				t.Errorf("error at line %d, want 2, where JSON.parse was called", res.Error.Line)
			}
		})
	}
}

// What the run shows does not depend on built-ins the script replaced.
func TestShownDespiteReplacedBuiltins(t *testing.T) {
	code := `Array.prototype.push = null; Array.from = null; Object.defineProperty = null; Function.prototype.call = null;
RegExp.prototype.exec = null; Object.prototype.hasOwnProperty = null;
return {m: new Map([["a", 1]]), s: new Set([2]), n: 3n}`
	res := Run(context.Background(), code, nil, Options{})
	if res.Error != nil || string(res.Value) != `{"m":{"a":1},"s":[2],"n":3}` {
		t.Fatalf("value %q, error %v", res.Value, res.Error)
	}
}
