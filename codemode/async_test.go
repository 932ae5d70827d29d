package codemode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// With or without await, tools give the same value; a returned promise is
// resolved before the result is built.
func TestAwait(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"sync", `return tools.echo({n: 1}).n`, `1`},
		{"await", `const r = await tools.echo({n: 1}); return r.n`, `1`},
		{"await on the call", `return (await tools.echo({n: 1})).n`, `1`},
		{"then", `return tools.echo({n: 1}).then(r => r.n + 1)`, `2`},
		{"then with rejection handler", `return tools.echo({n: 1}).then(r => r.n, e => -1)`, `1`},
		{"Promise.all", `const [a, b] = await Promise.all([tools.echo({n: 1}), tools.echo({n: 2})]); return a.n + b.n`, `3`},
		{"Promise.allSettled over async calls", `const r = await Promise.allSettled([1, 2].map(async n => n == 1 ? tools.echo({n}) : tools.fail({}))); return r.map(x => x.status)`, `["fulfilled","rejected"]`},
		{"async helper", "async function get(n: number) { const r = await tools.echo({n}); return r.n * 10 }\nreturn await get(4)", `40`},
		{"returned promise", `return tools.echo({n: 5})`, `{"n":5}`},
		{"returned pending chain", `return Promise.resolve(1).then(x => x + 1).then(x => x * 10)`, `20`},
		{"awaited value keeps no then", `const r = await tools.echo({n: 1}); return Object.keys(r).concat("then" in r ? ["then"] : [])`, `["n"]`},
		{"sync value hides then from JSON", `return JSON.stringify(tools.echo({n: 1}))`, `{"n":1}`},
		{"awaited twice", `const p = tools.echo({n: 1}); await p; const r = await p; return r.n`, `1`},
		{"frozen result", `const r = Object.freeze(tools.echo({n: 1})); return (await r).n`, `1`},
		{"array result", `return (await tools.list({})).length`, `3`},
		{"string result", `return (await tools.text({})).toUpperCase()`, `"HELLO"`},
		{"try/catch around a failing tool", "try {\n  await tools.fail({});\n  return 'no';\n} catch (e) {\n  return String(e.message);\n}", `"tools.fail: nope"`},
		{".catch on a failing call", `return Promise.resolve().then(() => tools.fail({})).catch(e => "caught")`, `"caught"`},
		// The tools are declared as returning promises: a promise's catch
		// and finally work on a call, whether it succeeds or fails, as
		// await gives (a failing call not awaited still throws where it
		// is made).
		{".catch on a call that succeeds", `const r = await tools.echo({n: 1}).catch(() => null); return r.n`, `1`},
		{".catch on a call that fails", `return await tools.fail({}).catch(e => "caught: " + e.message)`, `"caught: tools.fail: nope"`},
		{".then with a rejection handler on a call that fails", `return tools.fail({}).then(() => "no", e => "handled")`, `"handled"`},
		{".finally on a call that succeeds", `let done = false; const r = await tools.echo({n: 2}).finally(() => { done = true }); return [r.n, done]`, `[2,true]`},
		{".finally then .catch on a call that fails", `let done = false; const r = await tools.fail({}).finally(() => { done = true }).catch(() => "caught"); return [r, done]`, `["caught",true]`},
		{"bracketed name, .catch", `return await tools["fail"]({}).catch(() => "caught")`, `"caught"`},
		{"Promise.allSettled over calls", `const r = await Promise.allSettled([tools.echo({n: 1}), tools.fail({})]); return r.map(x => x.status)`, `["fulfilled","rejected"]`},
		{"Promise.all over a failing call, caught", `return await Promise.all([tools.echo({n: 1}), tools.fail({})]).catch(e => e.message)`, `"tools.fail: nope"`},
		{"awaited value keeps no catch or finally", `const r = await tools.echo({n: 1}).catch(() => null); return ["then", "catch", "finally"].filter(k => k in r)`, `[]`},
		{"a tools of the script's own", "const tools = {n: 3, get(k: number) { return this.n * k }};\nreturn await tools.get(2).then((v: number) => v + 1)", `7`},
		{"a tools of the script's own, in Promise.all", "const tools = {get: async (k: number) => k};\nreturn await Promise.all([tools.get(1), tools['get'](2)])", `[1,2]`},
		{".then on a string result", `return tools.text({}).then(s => s.length)`, `5`},
		{"a result's own catch field is kept", `return (await tools.own({})).catch`, `1`},
		{"queueMicrotask", `let x = 0; queueMicrotask(() => { x = 1 }); await null; return x`, `1`},
		{"top-level for await", `let n = 0; for await (const x of [Promise.resolve(1), 2]) n += x; return n`, `3`},
		{"async generator", "async function* gen() { yield 1; yield await Promise.resolve(2) }\nconst out: number[] = [];\nfor await (const v of gen()) out.push(v);\nreturn out", `[1,2]`},
	}
	fail := Tool{Name: "fail", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("fail: nope")
	}}
	tools := []Tool{echoTool(), fail, jsonTool("list", []int{1, 2, 3}), jsonTool("text", "hello"), jsonTool("own", map[string]int{"catch": 1})}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(context.Background(), tt.code, tools, Options{})
			if res.Error != nil {
				t.Fatalf("error: %v", res.Error)
			}
			want := tt.want
			if strings.HasPrefix(want, `"`) {
				want = strings.Trim(want, `"`) // a string is shown as itself
			}
			if got := string(res.Value); got != want {
				t.Errorf("value %s, want %s", got, want)
			}
		})
	}
}

// TypeScript is transpiled, and errors point at the code as written.
func TestTypeScriptErrors(t *testing.T) {
	tests := []struct {
		name, code   string
		kind         string
		line, column int
		msg          string
	}{
		{"syntax error after an interface", "interface Row {\n  id: number;\n  name: string;\n}\nconst rows: Row[] = [;\nreturn rows", "syntax", 5, 22, "SyntaxError"},
		{"runtime error after types", "type Id = string;\ninterface A { x?: { y: number } }\nconst a: A = {};\nconst id: Id = 'q';\nreturn a.x!.y", "exception", 5, 13, "TypeError"},
		{"thrown error", "enum Color { Red, Green }\nconst c: Color = Color.Green;\n\nthrow new Error(`bad color ${c}`);", "exception", 4, 7, "Error: bad color 1"},
		{"rejected promise", "async function f(): Promise<number> {\n  await null;\n  throw new RangeError('late');\n}\nreturn f()", "exception", 3, 9, "RangeError: late"},
		{"tool failure uncaught", "const x: number = 1;\nawait tools.fail({});", "exception", 2, 17, "tools.fail: nope"},
		{"await in a plain function", "function f() {\n  await tools.echo({});\n}\nf()", "syntax", 2, 3, "await"},
		{"non-ASCII before the error", "const s = 'héllo wörld'; const = 1", "syntax", 1, 32, "SyntaxError"},
	}
	fail := Tool{Name: "fail", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("fail: nope")
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(context.Background(), tt.code, []Tool{echoTool(), fail}, Options{})
			e := res.Error
			if e == nil {
				t.Fatalf("no error; value %s", res.Value)
			}
			if e.Kind != tt.kind || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("kind %q, message %q; want %q with %q", e.Kind, e.Message, tt.kind, tt.msg)
			}
			if e.Line != tt.line || e.Column != tt.column {
				t.Errorf("at %d:%d, want %d:%d (%s)", e.Line, e.Column, tt.line, tt.column, e.Message)
			}
		})
	}
}

// A promise that nothing will settle ends the run at once (nothing is
// left that could settle it), with an error that says so, not after the
// run's whole timeout.
func TestPromiseNeverSettles(t *testing.T) {
	for _, code := range []string{
		"await new Promise(() => {});",
		"return new Promise(() => {})",
		"const {promise} = Promise.withResolvers(); return promise",
		"const r = tools.echo({});\nawait new Promise<void>(resolve => { tools.echo({}) });",
	} {
		// A minute's timeout: the message says the run did not wait it out
		// (no wall-clock check, which a busy machine would make flaky).
		res := Run(context.Background(), code, []Tool{echoTool()}, Options{Timeout: time.Minute})
		if res.Error == nil || res.Error.Kind != "timeout" || !errors.Is(res.Error, ErrTimeout) || !strings.Contains(res.Error.Message, "never settled") {
			t.Errorf("%s: error %+v, want a timeout saying the promise never settled", code, res.Error)
		}
	}
}

// The bridge rule holds for awaited calls and for calls in Promise.all.
func TestBridgeWithAwait(t *testing.T) {
	budget := 100
	big := map[string]string{"text": strings.Repeat("b", budget+1)}
	s := newSaver()
	code := `const [a, b] = await Promise.all([tools.big({}), tools.big({})]);
const c = await tools.big({}).then(x => x.text.slice(0, 1));
return a.text.length + b.text.length + c.length`
	res := Run(context.Background(), code, []Tool{jsonTool("big", big)}, Options{Save: s.save, Budget: budget})
	if res.Error != nil || string(res.Value) != "203" {
		t.Fatalf("value %s, error %v", res.Value, res.Error)
	}
	if len(res.Retained) != 3 {
		t.Fatalf("retained %+v, want 3 copies", res.Retained)
	}
	for i, r := range res.Retained {
		if r.Call != i+1 || r.OutputID == "" || !strings.HasPrefix(string(s.copies[r.OutputID].Text), `{"text":"bbb`) {
			t.Errorf("retained[%d] = %+v", i, r)
		}
	}
}

// Each built-in models reach for is there, natively or polyfilled.
func TestBuiltins(t *testing.T) {
	tests := []struct{ name, code, want string }{
		{"at", `return [1, 2, 3].at(-1)`, `3`},
		{"flatMap", `return [1, 2].flatMap(x => [x, x * 10])`, `[1,10,2,20]`},
		{"Object.fromEntries", `return Object.fromEntries([["a", 1], ["b", 2]])`, `{"a":1,"b":2}`},
		{"Object.groupBy", `return Object.groupBy([1, 2, 3, 4], x => x % 2 ? "odd" : "even")`, `{"odd":[1,3],"even":[2,4]}`},
		{"Object.groupBy index", `return Object.groupBy(["a", "b"], (x, i) => i)`, `{"0":["a"],"1":["b"]}`},
		{"Object.groupBy on a Set", `return Object.groupBy(new Set([1, 2]), x => "k")`, `{"k":[1,2]}`},
		{"Map.groupBy", `const m = Map.groupBy([1, 2, 3], x => x > 1); return [m.get(true), m.get(false)]`, `[[2,3],[1]]`},
		{"structuredClone deep", `const a = {x: [1, {y: 2}], d: new Date(0)}; const b = structuredClone(a); b.x[1].y = 3; return [a.x[1].y, b.d.getTime(), b.d instanceof Date]`, `[2,0,true]`},
		{"structuredClone cycles", `const a: any = {n: 1}; a.self = a; const b = structuredClone(a); return [b.self === b, b !== a]`, `[true,true]`},
		{"structuredClone Map and Set", `const m = structuredClone(new Map([["a", new Set([1])]])); return [...m.get("a")]`, `[1]`},
		{"structuredClone refuses functions", `try { structuredClone({f() {}}) } catch (e) { return e instanceof TypeError }`, `true`},
		{"replaceAll", `return "a-b-c".replaceAll("-", "+")`, `"a+b+c"`},
		{"matchAll", `return [..."a1b22".matchAll(/\d+/g)].map(m => m[0])`, `["1","22"]`},
		{"Array.from length", `return Array.from({length: 3}, (_, i) => i * 2)`, `[0,2,4]`},
		{"optional chaining and ??", `const o: any = {a: null}; return [o.a?.b, o.x?.y ?? "d", o.f?.()]`, `[null,"d",null]`},
		{"spread and destructuring", `const {a, ...rest} = {a: 1, b: 2, c: 3}; const [x, ...xs] = [1, 2, 3]; return {a, rest, x, xs, m: Math.max(...xs)}`, `{"a":1,"rest":{"b":2,"c":3},"x":1,"xs":[2,3],"m":3}`},
		{"template literals", "const n = 2; return `n=${n}, twice=${n * 2}`", `"n=2, twice=4"`},
		{"Map and Set", `const m = new Map([["a", 1]]); const s = new Set([1, 1, 2]); return [m.get("a"), s.size, [...s]]`, `[1,2,[1,2]]`},
		{"JSON", `return JSON.parse(JSON.stringify({a: [1, "x"]}))`, `{"a":[1,"x"]}`},
		{"Promise.withResolvers", `const {promise, resolve} = Promise.withResolvers(); resolve(7); return promise`, `7`},
		{"class fields and private", `class C { #n = 1; inc() { return ++this.#n } }; return new C().inc()`, `2`},
		{"logical assignment", `let a: number | null = null; a ??= 5; return a`, `5`},
		{"instanceof the guarded constructors", `return [[] instanceof Array, new Uint8Array(1) instanceof Uint8Array, new ArrayBuffer(1) instanceof ArrayBuffer, {} instanceof Array]`, `[true,true,true,false]`},
		{"toSorted and findLast", `return [[3, 1, 2].toSorted(), [1, 2, 3].findLast(x => x < 3)]`, `[[1,2,3],2]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(context.Background(), tt.code, nil, Options{})
			if res.Error != nil {
				t.Fatalf("error: %v", res.Error)
			}
			want := tt.want
			if strings.HasPrefix(want, `"`) {
				want = strings.Trim(want, `"`) // a string is shown as itself
			}
			if got := string(res.Value); got != want {
				t.Errorf("value %s, want %s", got, want)
			}
		})
	}
}

func TestConsoleLevels(t *testing.T) {
	res := Run(context.Background(), `console.log("l"); console.info("i"); console.debug("d"); console.warn("w"); console.error("e"); return 1`, nil, Options{})
	if want := "l\ni\nd\nwarn: w\nerror: e\n"; res.Logs != want {
		t.Errorf("logs %q, want %q", res.Logs, want)
	}
}

// The memory watch, driven by a heap reading the test controls.
func TestMemoryWatch(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name      string
		heap      []uint64 // readings after the base, in MiB; the last repeats
		afterGC   uint64   // what the heap reads once collected, in MiB
		interrupt bool
		jump      bool // readings in quick succession count as one huge allocation
		// counters: the watch reads allocation counters, which show many
		// small allocations between readings; during is what they count
		// while a collection runs, in MiB.
		counters    bool
		during      uint64
		collections int64 // collections run before the verdict; 0: not checked
	}{
		{"under the limit", []uint64{10, 50, 90}, 0, false, false, false, 0, 0},
		{"garbage, collected", []uint64{50, 110}, 20, false, false, false, 0, 0},
		{"live past the limit, asked twice", []uint64{50, 110}, 105, true, false, false, 0, 2},
		{"past the slack: no waiting for a stalled collector", []uint64{50, 200}, 0, true, false, false, 0, 0},
		{"past the slack, garbage, collected", []uint64{50, 200}, 20, false, false, false, 0, 0},
		{"one huge allocation past the slack", []uint64{50, 200}, 20, true, true, false, 0, 0},
		{"one huge allocation of half the limit, under it", []uint64{10, 60}, 60, true, true, false, 0, 0},
		{"a third of the limit at once, under it", []uint64{10, 43}, 43, false, true, false, 0, 0},
		{"half the limit in many small allocations", []uint64{10, 60}, 60, false, false, true, 0, 0},
		{"live past the limit before the collection: asked once", []uint64{50, 110}, 105, true, false, true, 0, 1},
		{"live past the limit, others allocated meanwhile: asked twice", []uint64{50, 110}, 105, true, false, true, 20, 2},
		{"live past the limit once, garbage by the next", []uint64{50, 110}, 105, false, false, true, 20, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			waitForcersDone(t)         // a collection still under way makes the watch unsure of its own
			jumpIn := time.Duration(0) // readings are never close enough for a jump
			if tt.jump {
				jumpIn = time.Hour
			}
			var reads, collections, extra atomic.Int64
			var afterGC atomic.Uint64
			afterGC.Store(tt.afterGC)
			var collected atomic.Bool
			// A collection is waited for as long as it takes, but for a
			// stalled one.
			wait := time.Hour
			if tt.name == "past the slack: no waiting for a stalled collector" {
				wait = time.Millisecond
			}
			gcDone := make(chan struct{})
			m := &memoryWatch{limit: 100 * mib, slack: 25 * mib, patience: wait, jumpWindow: jumpIn, every: time.Microsecond,
				heap: func() uint64 {
					n := reads.Add(1) - 2 // the first read is the base
					if n < 0 {
						return 0
					}
					if collected.Load() {
						return afterGC.Load() * mib
					}
					return tt.heap[min(int(n), len(tt.heap)-1)] * mib
				},
				live: func() uint64 {
					if collected.Load() {
						return afterGC.Load() * mib
					}
					return 0
				},
				collect: func() {
					if tt.name == "past the slack: no waiting for a stalled collector" {
						<-gcDone // a collector stalled by the script
					}
					n := collections.Add(1)
					extra.Add(int64(tt.during * mib))
					if tt.name == "live past the limit once, garbage by the next" && n > 1 {
						afterGC.Store(20) // others' data, counted live by the first collection
					}
					collected.Store(true)
				},
			}
			if tt.counters {
				// A million 64-byte objects between readings, until the
				// heap reads the same.
				m.allocs = func() allocCounts {
					n := uint64(min(reads.Load(), int64(len(tt.heap)+1))) * 1e6
					return allocCounts{bytes: n*64 + uint64(extra.Load())}
				}
			}
			fired := make(chan struct{}, 1)
			stop := m.start(func() { fired <- struct{}{} })
			// Stop once the watch has fired, or once it has read the
			// heap many times over without firing (far more when it
			// should fire: a busy machine may run its collections late).
			enough := int64(2000)
			if tt.interrupt {
				enough = 1e7
			}
			for reads.Load() < enough && len(fired) == 0 {
				time.Sleep(time.Millisecond)
			}
			hit := stop()
			close(gcDone)
			if hit != tt.interrupt || (len(fired) == 1) != tt.interrupt {
				t.Errorf("interrupted %v (fired %d), want %v", hit, len(fired), tt.interrupt)
			}
			if n := collections.Load(); tt.collections > 0 && n != tt.collections {
				t.Errorf("%d collections before the verdict, want %d", n, tt.collections)
			}
		})
	}
}

// The memory watch's stop is honoured wherever the script is when it
// comes: running, inside a promise job, in a microtask loop, or awaiting a
// promise nothing will settle; and it is reported as the memory error, not
// as the timeout the run would otherwise reach.
func TestMemoryStopWhileAsync(t *testing.T) {
	tests := []struct{ name, code string }{
		{"in a loop", "tools.grow({});\nfor (;;) {}"},
		{"in a promise job", "await null;\ntools.grow({});\nfor (;;) {}"},
		{"in a microtask loop", "await null;\ntools.grow({});\nfor (;;) await null;"},
		{"in an async helper", "async function f() {\n  await null;\n  tools.grow({});\n  while (true) {}\n}\nawait f();"},
		{"in a then callback", "await Promise.resolve().then(() => { tools.grow({}); for (;;) {} });"},
		{"in a promise chain loop", "tools.grow({});\nconst loop = (): Promise<void> => Promise.resolve().then(loop);\nawait loop();"},
		{"awaiting a promise that never settles", "await null;\ntools.grow({});\nawait new Promise(() => {});"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var grown atomic.Bool
			grow := Tool{Name: "grow", Call: func(context.Context, json.RawMessage) (json.RawMessage, error) {
				grown.Store(true)
				return json.RawMessage("{}"), nil
			}}
			heap := func() uint64 {
				if grown.Load() {
					return 10 << 30
				}
				return 0
			}
			mem := &memoryWatch{limit: 100 << 20, slack: 25 << 20, patience: time.Hour, jumpWindow: time.Hour, every: time.Millisecond,
				heap: heap, live: heap, collect: func() {}}
			// A lost stop would end at the timeout instead, and say so.
			opts := Options{Timeout: time.Minute}.withDefaults()
			res := runWith(context.Background(), tt.code, []Tool{grow}, opts, mem, false)
			if res.Error == nil || res.Error.Kind != "memory" || !errors.Is(res.Error, ErrMemory) || !strings.Contains(res.Error.Message, "memory limit exceeded") {
				t.Fatalf("error %+v, want the memory error", res.Error)
			}
		})
	}
}

// The process's allocation counters tell one huge allocation from many
// smaller ones.
func TestAllocCounts(t *testing.T) {
	const mib = 1 << 20
	var sink [][]byte
	for _, tt := range []struct {
		name  string
		alloc func()
		huge  bool
	}{
		{"one huge", func() { sink = append(sink, make([]byte, 64*mib)) }, true},
		{"a few huge", func() { sink = append(sink, make([]byte, 32*mib), make([]byte, 48*mib)) }, true},
		{"many 1 MiB", func() {
			for range 64 {
				sink = append(sink, make([]byte, mib))
			}
		}, false},
		{"many small", func() {
			for range 1 << 20 {
				sink = append(sink, make([]byte, 64))
			}
		}, false},
	} {
		sink = nil
		before := allocated()
		tt.alloc()
		after := allocated()
		if got := after.sinceHuge(before, 16*mib); got != tt.huge {
			t.Errorf("%s: huge %v, want %v (%+v since %+v)", tt.name, got, tt.huge, after, before)
		}
	}
	runtime.KeepAlive(sink)
}

// TestUnhandledRejection: a promise the script lets be rejected with no
// handler (an async callback in forEach, a .then chain not awaited) is
// not lost without a word: the logs say what it was rejected with, and
// where. The run's own result is as it was; a rejection that is handled,
// or that is the script's own error, is not logged.
func TestUnhandledRejection(t *testing.T) {
	fail := Tool{Name: "fail", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("fail: nope")
	}}
	tests := []struct {
		name, code, value string
		logs              []string // each in the logs; none: no rejection logged
		count             int      // lines saying "unhandled"
	}{
		{"then chain not awaited", "tools.fail({}).then(r => r);\nreturn 1", "1", []string{"unhandled promise rejection", "tools.fail: nope", "line 1"}, 1},
		{"async callbacks in forEach", "[1, 2].forEach(async n => {\n  await tools.fail({n});\n});\nreturn 2", "2", []string{"tools.fail: nope", "line 2"}, 2},
		{"rejected promise dropped", "const a = 1;\nPromise.reject(new Error('dropped'));\nreturn 3", "3", []string{"Error: dropped", "line 2"}, 1},
		{"caught", "await tools.fail({}).catch(() => null);\nreturn 4", "4", nil, 0},
		{"caught later", "const p = Promise.reject(new Error('x'));\nawait null;\nreturn await p.catch(() => 5)", "5", nil, 0},
		{"allSettled", "await Promise.allSettled([1, 2].map(async () => tools.fail({})));\nreturn 6", "6", nil, 0},
		// Many rejected, all handled later, and one of them left: only it
		// is logged.
		{"many handled later", "const ps = [];\nfor (let i = 0; i < 20000; i++) ps.push(Promise.reject(new Error('x' + i)));\nPromise.reject(new Error('the one left'));\nconst r = await Promise.allSettled(ps);\nreturn r.length", "20000", []string{"Error: the one left", "line 3"}, 1},
		// In the order they were rejected.
		{"in order", "Promise.reject(new Error('first'));\nPromise.reject(new Error('second'));\nreturn 7", "7", []string{"first (line 1", "second (line 2"}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Run(context.Background(), tt.code, []Tool{echoTool(), fail}, Options{})
			if res.Error != nil || string(res.Value) != tt.value {
				t.Fatalf("value %q, error %v; want %s", res.Value, res.Error, tt.value)
			}
			for _, s := range tt.logs {
				if !strings.Contains(res.Logs, s) {
					t.Errorf("logs %q lack %q", res.Logs, s)
				}
			}
			if n := strings.Count(res.Logs, "unhandled"); n != tt.count {
				t.Errorf("logs %q say unhandled %d times, want %d", res.Logs, n, tt.count)
			}
		})
	}
	// The rejections are logged in the order they happened, whatever the
	// order of a map.
	for range 5 {
		res := Run(context.Background(), "for (let i = 0; i < 9; i++) Promise.reject(new Error('r' + i));\nreturn 0", nil, Options{})
		last := -1
		for i := range 9 {
			at := strings.Index(res.Logs, fmt.Sprintf("Error: r%d ", i))
			if at <= last {
				t.Fatalf("rejection r%d logged out of order: %q", i, res.Logs)
			}
			last = at
		}
	}
	// The script's own error is its error, not also an unhandled rejection.
	res := Run(context.Background(), "await tools.fail({})", []Tool{fail}, Options{})
	if res.Error == nil || strings.Contains(res.Logs, "unhandled") {
		t.Errorf("error %v, logs %q", res.Error, res.Logs)
	}
}
