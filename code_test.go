package scrollback_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// codeSession opens a real SQLite store in a temporary directory; its
// scripts run in this process.
func codeSession(t testing.TB) *scrollback.Session {
	t.Helper()
	return codeSessionWith(t, nil)
}

// codeSessionWith is codeSession with scripts run by workers (nil: in
// this process).
func codeSessionWith(t testing.TB, workers *codemode.Pool) *scrollback.Session {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "code.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sess, err := scrollback.New(st, scrollback.Options{CodeWorkers: workers}).NewSession(context.Background(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// codeModes runs f once with scripts in this process and once in worker
// processes (the pool TestMain made), as subtests.
func codeModes(t *testing.T, f func(t *testing.T, sess *scrollback.Session)) {
	for _, m := range []struct {
		name    string
		workers *codemode.Pool
	}{{"in-process", nil}, {"workers", testWorkers}} {
		t.Run(m.name, func(t *testing.T) { f(t, codeSessionWith(t, m.workers)) })
	}
}

// codeReadAll follows read_tool_output from offset 0 to the end, as a model
// would, and returns the text and the last page.
func codeReadAll(t testing.TB, sess *scrollback.Session, id string) (string, scrollback.Page) {
	t.Helper()
	var b strings.Builder
	var p scrollback.Page
	for off := int64(0); ; off = p.NextOffset {
		var err error
		p, err = sess.ReadToolOutput(context.Background(), scrollback.ReadInput{ID: id, Offset: off})
		if err != nil {
			t.Fatalf("read_tool_output %s at %d: %v", id, off, err)
		}
		b.WriteString(p.Text)
		if !p.HasMore {
			return b.String(), p
		}
	}
}

// bigTool returns a string result of n bytes with marker near its end.
func bigTool(n int, marker string) codemode.Tool {
	return codemode.Tool{Name: "big", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		s := strings.Repeat("abcdefghij\n", (n-len(marker)-100)/11) + marker
		s += strings.Repeat("z", n-len(s))
		return json.Marshal(s)
	}}
}

func TestRunCodeSliceRecovery(t *testing.T) { codeModes(t, testRunCodeSliceRecovery) }

func testRunCodeSliceRecovery(t *testing.T, sess *scrollback.Session) {
	const marker = "MARKER-7f3a"
	res, err := sess.RunCode(context.Background(), scrollback.RunCodeInput{
		Code: "const r = tools.big({});\nreturn r.slice(0, 100);",
	}, bigTool(3<<20, marker))
	if err != nil || res.Error != nil {
		t.Fatalf("err %v, script error %v", err, res.Error)
	}
	if strings.Contains(res.Preview, marker) || len(res.Preview) != 100 || res.OutputID != "" {
		t.Fatalf("the return value is the 100-byte slice: %q (id %q)", res.Preview, res.OutputID)
	}
	if len(res.Retained) != 1 {
		t.Fatalf("retained %+v, want the big result's copy", res.Retained)
	}
	ref := res.Retained[0]
	if ref.Call != 1 || ref.Tool != "big" || ref.TotalBytes != 3<<20 || !ref.Complete {
		t.Errorf("ref %+v", ref)
	}
	text, last := codeReadAll(t, sess, ref.OutputID)
	if !strings.Contains(text, marker) || int64(len(text)) != ref.TotalBytes || !last.Complete {
		t.Errorf("following retained[0]: %d bytes, marker found %v", len(text), strings.Contains(text, marker))
	}
}

func TestRunCodeSecondID(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 20 MiB through a command")
	}
	codeModes(t, testRunCodeSecondID)
}

func testRunCodeSecondID(t *testing.T, sess *scrollback.Session) {
	ctx := context.Background()
	res, err := sess.RunCode(ctx, scrollback.RunCodeInput{
		// The command's own preview asked large, so that the result the
		// script returns, which wraps it, is over the budget too.
		Code: `return tools.run_command({command: "head -c 20971520 /dev/zero | tr '\\0' x; echo; echo THE-END", preview: {head_bytes: 22000, tail_bytes: 2500}});`,
	})
	if err != nil || res.Error != nil {
		t.Fatalf("err %v, script error %v", err, res.Error)
	}
	if res.OutputID == "" || !res.Truncated {
		t.Fatalf("the returned command result does not fit: want an output_id, got %+v", res)
	}
	// The footer of the run's value points at the command's own copy,
	// which holds the whole output, not into the wrapper.
	if !strings.Contains(res.Preview, "is copy out_") || strings.Contains(res.Preview, "query_tool_output") {
		t.Errorf("the footer does not point at the command's copy:\n%s", res.Preview[strings.Index(res.Preview, "[..."):])
	}
	// Follow the run's output_id: it holds the nested result as JSON.
	text, _ := codeReadAll(t, sess, res.OutputID)
	var cmd scrollback.RunCommandResult
	if err := json.Unmarshal([]byte(text), &cmd); err != nil {
		t.Fatalf("the run's copy is not the command result: %v", err)
	}
	if cmd.OutputID == "" || cmd.Complete || cmd.StdoutBytes < 20<<20 {
		t.Fatalf("command result %+v", cmd)
	}
	// Its own output_id is listed in retained too.
	var listed bool
	for _, r := range res.Retained {
		if r.OutputID == cmd.OutputID && r.Tool == "run_command" && r.Call == 1 && !r.Complete && r.Holds == present.HoldsOutput && strings.HasPrefix(r.Command, "head -c 20971520") {
			listed = true
		}
	}
	if !listed {
		t.Errorf("the command's own copy %s is not in retained %+v", cmd.OutputID, res.Retained)
	}
	// Follow that second id to the end: the tail is there, complete is false.
	out, last := codeReadAll(t, sess, cmd.OutputID)
	if !strings.HasSuffix(out, "THE-END\n") || last.Complete || int64(len(out)) != cmd.TotalBytes {
		t.Errorf("command copy: %d bytes, complete %v, ends %q", len(out), last.Complete, out[max(0, len(out)-20):])
	}
}

func TestRunCodeSmallResults(t *testing.T) { codeModes(t, testRunCodeSmallResults) }

func testRunCodeSmallResults(t *testing.T, sess *scrollback.Session) {
	ctx := context.Background()
	res, err := sess.RunCode(ctx, scrollback.RunCodeInput{Code: `
		const r = tools.run_command({command: "echo hello"});
		const f = tools.read_file({path: "go.mod", limit: 1});
		console.log("exit", r.exit_code);
		return {out: r.preview.trim(), first: f.text.trim()};`})
	if err != nil || res.Error != nil {
		t.Fatalf("err %v, script error %v", err, res.Error)
	}
	if res.Preview != `{"out":"hello","first":"module github.com/scrollback-dev/scrollback"}` || res.Logs != "exit 0\n" {
		t.Errorf("preview %q logs %q", res.Preview, res.Logs)
	}
	if res.Retained == nil || len(res.Retained) != 0 || res.OutputID != "" || res.Recovery != scrollback.RecoveryNotNeeded {
		t.Errorf("small results made copies: %+v", res)
	}
	copies, _ := sess.Copies(ctx)
	if len(copies) != 0 {
		t.Errorf("%d copies in the session", len(copies))
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"retained":[]`) || strings.Contains(string(b), `"error"`) {
		t.Errorf("JSON: %s", b)
	}
}

func TestRunCodeFailures(t *testing.T) { codeModes(t, testRunCodeFailures) }

func testRunCodeFailures(t *testing.T, sess *scrollback.Session) {
	tests := []struct {
		name, code string
		timeout    int64
		kind, msg  string
		line       int
	}{
		// All of line 2, so that a timeout a busy machine fires before the
		// loop starts is on line 2 as well.
		{"timeout", "// never ends\nlet n = 0; while (true) { n++ }", 200, "timeout", "timeout", 2},
		{"thrown", "console.log('a');\nthrow new Error('boom')", 0, "exception", "Error: boom", 2},
		{"syntax", "return (;", 0, "syntax", "SyntaxError", 1},
		// A busy machine must not turn a memory stop into a timeout: the
		// memory case gets all the time it needs (10 min, not the default 30 s).
		{"huge string", "let s = 'x';\nwhile (true) s += s;", 600000, "memory", "memory limit exceeded", 2},
		{"deep recursion", "const f = n => f(n + 1);\nreturn f(0)", 0, "stack", "call stack", 1},
		{"run_code inside", "return tools.run_code({code: 'return 1'})", 0, "exception", "cannot be called from inside run_code", 1},
		{"bad tool arguments", "return tools.run_command({cmd: 'ls'})", 0, "exception", `unknown field "cmd"`, 1},
		{"tool error", "return tools.read_tool_output({id: 'out_nope'})", 0, "exception", "no retained output", 1},
		// Wrong types are named in the script's terms, not Go's.
		{"argument of the wrong type", "return tools.read_tool_output({id: 123})", 0, "exception", "bad arguments: id must be a string, not a number; the arguments are: id, offset, limit", 1},
		{"integer given as a string", "return tools.grep_tool_output({id: 'x', pattern: 'a', max: '5'})", 0, "exception", "bad arguments: max must be an integer, not a string", 1},
		{"boolean given as a string", "return tools.grep_tool_output({id: 'x', pattern: 'a', ignore_case: 'yes'})", 0, "exception", "bad arguments: ignore_case must be a boolean, not a string", 1},
		{"object given as a string", "return tools.run_command({command: 'ls', env: 'A=1'})", 0, "exception", "bad arguments: env must be an object, not a string", 1},
		// TypeScript: positions are the code as written, types and all.
		{"typescript runtime error", "interface A { x?: { y: number } }\nconst a: A = {};\nreturn a.x!.y", 0, "exception", "TypeError", 3},
		{"typescript syntax error", "type Id = string;\nconst id: Id = ;", 0, "syntax", "SyntaxError", 2},
		// Limits with async code.
		{"loop in an async helper", "async function spin(): Promise<void> {\n  let n = 0; while (true) { n++ }\n}\nawait spin();", 200, "timeout", "timeout", 2},
		{"microtask loop", "let n: number = 0;\nfor (;;) { n++; await null; }", 200, "timeout", "timeout", 2},
		{"awaited promise that never settles", "const x: number = 1;\nawait new Promise<void>(() => {});", 200, "timeout", "never settled", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := sess.RunCode(context.Background(), scrollback.RunCodeInput{Code: tt.code, TimeoutMS: tt.timeout})
			if err != nil {
				t.Fatal(err)
			}
			line := tt.line
			if res.Error != nil && tt.kind == "memory" && strings.Contains(t.Name(), "/workers/") && (raceEnabled || res.Error.Line == 0) {
				// The worker's own watch stops a doubling string with its
				// line; when the server's watch (or, under -race, always)
				// kills the worker first, there is no line to give, and the
				// model is still told the memory limit. Both are right; a
				// busy machine decides which comes first.
				line = res.Error.Line
			}
			if res.Error != nil && tt.name == "microtask loop" && res.Error.Line == 0 {
				// Stopped between awaits, while a promise job resumed the
				// script: goja has no position there, and no line is
				// given rather than a wrong one (codemode's
				// TestStopPositions). Where it has one, it is the loop's.
				line = 0
			}
			if res.Error == nil || res.Error.Kind != tt.kind || !strings.Contains(res.Error.Message, tt.msg) || res.Error.Line != line {
				t.Fatalf("error %+v, want kind %s, %q, line %d", res.Error, tt.kind, tt.msg, tt.line)
			}
			if res.Retained == nil {
				t.Error("retained is nil, want []")
			}
		})
	}
}

func TestRunCodeBadInput(t *testing.T) {
	sess := codeSession(t)
	for _, in := range []scrollback.RunCodeInput{{Code: "  "}, {Code: "return 1", TimeoutMS: -1}} {
		_, err := sess.RunCode(context.Background(), in)
		if !errors.Is(err, scrollback.ErrArgument) {
			t.Errorf("%+v: error %v, want ErrArgument", in, err)
		}
	}
}

func TestCodeDescription(t *testing.T) {
	own := scrollback.CodeDescription()
	if len(own) >= 3072 {
		t.Errorf("run_code's description is %d bytes, want under 3 KiB", len(own))
	}
	d := scrollback.CodeDescription(codemode.Tool{Name: "upstream_search", InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`)})
	for _, want := range []string{
		"declare const tools: {",
		"  run_command(input: any): Promise<{ preview: string; truncated: boolean; output_id?: string; exit_code: null | number;",
		"  read_tool_output(input: any): Promise<{ text: string; nextOffset: number;",
		"  grep_tool_output(input: any): Promise<{ matches?: { line: number; offset: number; text: string;",
		"  read_file(input: any): Promise<{ text: string; startLine: number;",
		"  upstream_search(input: any): Promise<any>;",
		present.CodeInputsListed,
		"async function",
		"is kept first",
		"retained",
		`("output": a tool's whole output`,
	} {
		if !strings.Contains(d, want) {
			t.Errorf("description lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "run_code(") {
		t.Error("run_code is listed as callable")
	}
	if strings.Contains(d, "//") {
		t.Errorf("the declaration has prose comments for tools that gave none:\n%s", d)
	}
	// The inputs are listed with the tools, sent with every request: not
	// again in the declaration.
	for _, dup := range []string{"command: string", "pattern: string", "q: string"} {
		if strings.Contains(d, dup) {
			t.Errorf("the declaration repeats the input %q listed with the tools:\n%s", dup, d)
		}
	}
}

// TestCodeDescriptionManyTools: an upstream of many tools is declared
// with its result types while the declaration fits MaxCodeDeclaration;
// past it the upstream tools lose them. No tool's input is declared (each
// is listed with its schema), and the description says where inputs are given.
// Every tool stays callable by name, and scrollback's own keep their
// result types.
func TestCodeDescriptionManyTools(t *testing.T) {
	tools := func(n int) []codemode.Tool {
		var out []codemode.Tool
		for i := range n {
			out = append(out, codemode.Tool{
				Name:         fmt.Sprintf("tool_%d", i),
				InputSchema:  json.RawMessage(`{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"per_page":{"type":"integer"}},"required":["owner","repo"]}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"items":{"type":"array","items":{"type":"string"}}}}`),
			})
		}
		return out
	}
	decl := func(d string) string { _, after, _ := strings.Cut(d, "declare const tools"); return after }
	own := len(decl(scrollback.CodeDescription()))
	for _, tc := range []struct {
		n     int
		types bool
	}{
		{n: 2, types: true},
		{n: 20, types: true},
		{n: 400, types: false},
	} {
		in := tools(tc.n)
		d := scrollback.CodeDescription(in...)
		for i := range tc.n {
			if !strings.Contains(d, fmt.Sprintf("  tool_%d(input: any): ", i)) {
				t.Fatalf("%d tools: tool_%d is not declared", tc.n, i)
			}
		}
		if strings.Contains(d, "owner: string") {
			t.Errorf("%d tools: upstream input types declared", tc.n)
		}
		if len(in[0].InputSchema) == 0 {
			t.Errorf("%d tools: CodeDescription cleared the caller's input schema", tc.n)
		}
		if got := strings.Contains(d, "  tool_1(input: any): Promise<{ items?: string[] }>;"); got != tc.types {
			t.Errorf("%d tools: upstream result types declared = %v, want %v", tc.n, got, tc.types)
		}
		if !strings.Contains(d, present.CodeInputsListed) {
			t.Errorf("%d tools: nothing says where the inputs are given", tc.n)
		}
		if !strings.Contains(d, "grep_tool_output(input: any): Promise<{ matches?:") || !strings.Contains(d, "run_command(input: any): Promise<{ preview: string;") {
			t.Errorf("%d tools: scrollback's own tools lost their result types", tc.n)
		}
		if tc.n == 20 && len(decl(d)) > scrollback.MaxCodeDeclaration {
			t.Errorf("20 tools: the declaration is %d bytes, over %d", len(decl(d)), scrollback.MaxCodeDeclaration)
		}
		if tc.n == 400 && len(decl(d)) > own+400*len("  tool_399(input: any): Promise<any>;\n") {
			t.Errorf("400 tools: the declaration is %d bytes, more than the names and signatures need", len(decl(d)))
		}
	}
}

// BenchmarkRunCodeNested5MiB: a nested 5 MiB result retained in a real
// SQLite store through Session.RunCode.
func BenchmarkRunCodeNested5MiB(b *testing.B) {
	sess := codeSession(b)
	tool := bigTool(5<<20, "END")
	for b.Loop() {
		res, err := sess.RunCode(context.Background(), scrollback.RunCodeInput{Code: "return tools.big({}).slice(0, 100)"}, tool)
		if err != nil || res.Error != nil || len(res.Retained) != 1 {
			b.Fatal(err, res.Error)
		}
	}
}

// A run that ends while a tool call is under way: the script is told
// the run's own timeout (or cancel) stopped it, at the call's line, not
// an opaque exception; a command that outlives the run's time ends as a
// timed-out result that the script receives, output and copy included;
// and a command cut short by a cancel still has its copy listed.
func TestRunCodeEndsDuringCall(t *testing.T) { codeModes(t, testRunCodeEndsDuringCall) }

func testRunCodeEndsDuringCall(t *testing.T, sess *scrollback.Session) {
	block := codemode.Tool{Name: "block", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("block: %w", ctx.Err())
	}}
	t.Run("tool blocks past the timeout", func(t *testing.T) {
		res, err := sess.RunCode(context.Background(), scrollback.RunCodeInput{Code: "console.log('start');\nawait tools.block({});\nreturn 1", TimeoutMS: 300}, block)
		if err != nil {
			t.Fatal(err)
		}
		if e := res.Error; e == nil || e.Kind != "timeout" || !strings.Contains(e.Message, "tools.block") || e.Line != 2 {
			t.Fatalf("error %+v, want a timeout during tools.block at line 2", e)
		}
	})
	t.Run("command outlives the run", func(t *testing.T) {
		res, err := sess.RunCode(context.Background(), scrollback.RunCodeInput{
			Code: "const r = await tools.run_command({command: 'seq 1 50000; sleep 30'});\nreturn {timed_out: r.timed_out, id: r.output_id}", TimeoutMS: 3000})
		if err != nil {
			t.Fatal(err)
		}
		if res.Error != nil || !strings.Contains(res.Preview, `"timed_out":true`) {
			t.Fatalf("error %+v, value %q; want the command's timed-out result", res.Error, res.Preview)
		}
		if len(res.Retained) != 1 || res.Retained[0].TotalBytes != 288894 || !strings.Contains(res.Preview, res.Retained[0].OutputID) {
			t.Fatalf("retained %+v, want the command's copy of 288894 bytes", res.Retained)
		}
	})
	t.Run("command canceled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		started := filepath.Join(t.TempDir(), "started")
		go func() {
			// Cancel once the command has written its output.
			for ctx.Err() == nil {
				if _, err := os.Stat(started); err == nil {
					cancel()
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		before, _ := sess.Copies(context.Background())
		res, err := sess.RunCode(ctx, scrollback.RunCodeInput{Code: "await tools.run_command({command: 'seq 1 50000; touch " + started + "; sleep 30'});"})
		if err != nil {
			t.Fatal(err)
		}
		if e := res.Error; e == nil || e.Kind != "canceled" {
			t.Errorf("error %+v, want canceled", e)
		}
		after, _ := sess.Copies(context.Background())
		if len(after) != len(before)+1 {
			t.Fatalf("%d copies made, want the command's", len(after)-len(before))
		}
		if len(res.Retained) != 1 || res.Retained[0].TotalBytes != 288894 {
			t.Fatalf("retained %+v, want the canceled command's copy of 288894 bytes", res.Retained)
		}
	})
}

// Console output longer than the preview budget is shown as any result
// is, a preview whose footer leads to a copy that holds all of it, not
// 64 KiB at once; the copy is listed in retained (holds "logs"), as every
// copy made during a run is.
func TestRunCodeLogsRetained(t *testing.T) { codeModes(t, testRunCodeLogsRetained) }

func testRunCodeLogsRetained(t *testing.T, sess *scrollback.Session) {
	tests := []struct {
		name, code string
		whole      bool // the logs are shown whole
		complete   bool
	}{
		{"short", "console.log('one'); console.log('two'); return 1", true, true},
		{"over the budget", "for (let i = 0; i < 1000; i++) console.log(`line ${i} ` + 'x'.repeat(40));\nreturn 1", false, true},
		{"over the console bound", "for (let i = 0; i < 3000; i++) console.log(`line ${i} ` + 'x'.repeat(40));\nreturn 1", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := sess.RunCode(context.Background(), scrollback.RunCodeInput{Code: tt.code})
			if err != nil {
				t.Fatal(err)
			}
			if res.Error != nil {
				t.Fatal(res.Error)
			}
			if tt.whole {
				if res.LogsOutputID != "" || res.Logs != "one\ntwo\n" || len(res.Retained) != 0 {
					t.Fatalf("logs %q (copy %q), retained %+v; want them whole, and no copy", res.Logs, res.LogsOutputID, res.Retained)
				}
				return
			}
			// The copy is listed in retained, as every copy made during
			// the call is, labelled as the console output.
			want := codemode.Ref{Call: 0, Tool: "run_code", OutputID: res.LogsOutputID, TotalBytes: res.LogsTotalBytes, Complete: tt.complete, Holds: present.HoldsLogs}
			if len(res.Retained) != 1 || res.Retained[0] != want {
				t.Errorf("retained %+v; want only the console output's copy, %+v", res.Retained, want)
			}
			if res.LogsOutputID == "" || len(res.Logs) > 8<<10 || !strings.Contains(res.Logs, res.LogsOutputID) || !strings.HasPrefix(res.Logs, "line 0 ") {
				t.Fatalf("logs of %d bytes (copy %q), want a preview of at most 8 KiB naming its copy", len(res.Logs), res.LogsOutputID)
			}
			text, last := codeReadAll(t, sess, res.LogsOutputID)
			if !strings.HasPrefix(text, "line 0 ") || !strings.Contains(text, "line 999 ") || last.Complete != tt.complete {
				t.Fatalf("copy of %d bytes, complete %v; want all the logs, complete %v", len(text), last.Complete, tt.complete)
			}
			if !tt.complete && !strings.Contains(text, "console output cut at") {
				t.Error("the copy of cut logs does not say they were cut")
			}
		})
	}
}

// failCopies is a store that cannot save a copy (a full disk, say).
type failCopies struct{ store.Store }

func (failCopies) SaveCopy(context.Context, string, store.CopyMeta, io.Reader) (store.CopyInfo, error) {
	return store.CopyInfo{}, errors.New("disk full")
}

// TestRunCodeLogsNotSaved: console output over the budget whose copy
// cannot be saved is listed in retained with no id and the reason, as the
// bridge lists a nested result it could not save, in this process and in
// a worker.
func TestRunCodeLogsNotSaved(t *testing.T) {
	for _, m := range []struct {
		name    string
		workers *codemode.Pool
	}{{"in-process", nil}, {"workers", testWorkers}} {
		t.Run(m.name, func(t *testing.T) {
			st, err := sqlite.Open(filepath.Join(t.TempDir(), "code.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			sess, err := scrollback.New(failCopies{st}, scrollback.Options{CodeWorkers: m.workers}).NewSession(context.Background(), scrollback.LocalOwner)
			if err != nil {
				t.Fatal(err)
			}
			res, err := sess.RunCode(context.Background(), scrollback.RunCodeInput{Code: "for (let i = 0; i < 1000; i++) console.log(`line ${i} ` + 'x'.repeat(40));\nreturn 1"})
			if err != nil || res.Error != nil {
				t.Fatalf("RunCode: %+v, %v", res.Error, err)
			}
			if len(res.Retained) != 1 {
				t.Fatalf("retained %+v; want the console output's copy, not saved", res.Retained)
			}
			r := res.Retained[0]
			if r.Holds != present.HoldsLogs || r.Tool != "run_code" || r.OutputID != "" || !strings.Contains(r.RecoveryError, "disk full") || res.LogsOutputID != "" {
				t.Errorf("retained %+v (logs copy %q); want holds logs, no id, and why it was not saved", r, res.LogsOutputID)
			}
		})
	}
}

// CodeTools' Call takes one JSON object: anything else (null, an array, a
// string, nothing) and anything after the object is an argument error,
// not dropped. Before, null ran the tool with no arguments and trailing
// data was ignored.
func TestCodeToolsCallArguments(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	var read codemode.Tool
	for _, tool := range sess.CodeTools() {
		if tool.Name == "read_file" {
			read = tool
		}
	}
	ctx := context.Background()
	if _, err := read.Call(ctx, []byte(` {"path": "doc.go", "limit": 1} `)); err != nil {
		t.Fatalf("an object with spaces around it: %v", err)
	}
	for _, args := range []string{
		`null`, `[]`, `"doc.go"`, `1`, ``, ` `,
		`{"path": "doc.go"} {"path": "/etc/shadow"}`,
		`{"path": "doc.go"}x`,
		`{"path": "doc.go"}]`,
	} {
		_, err := read.Call(ctx, []byte(args))
		if !errors.Is(err, scrollback.ErrArgument) || !strings.Contains(err.Error(), "object") {
			t.Errorf("Call(%q) = %v; want an argument error that asks for one object", args, err)
		}
	}
}

// TestCodeToolsCallWholeNumbers: an integer input written as a JSON
// number with an exponent or a zero fraction (1e3, 1000.0) is the integer
// it equals, as JSON Schema's "integer" and the MCP server have it; a
// number with a fraction (1.5) is an argument error naming the input, and
// a whole number too large for it one that says it is out of range, not
// that it is not an integer. Before, CodeTools' Call refused 1e3 as "not
// an integer".
func TestCodeToolsCallWholeNumbers(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	ctx := context.Background()
	tools := map[string]codemode.Tool{}
	for _, tool := range sess.CodeTools() {
		tools[tool.Name] = tool
	}
	rc, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "seq 1 20000"})
	if err != nil || rc.OutputID == "" {
		t.Fatalf("run_command: %+v, %v", rc, err)
	}
	id := strconv.Quote(rc.OutputID)
	for _, tc := range []struct {
		tool, args string
		want       string // in the result's JSON; "" = an error is wanted
		err        []string
	}{
		{"run_command", `{"command": "echo hi", "timeout_ms": 1e3}`, `"exit_code":0`, nil},
		{"run_command", `{"command": "echo hi", "timeout_ms": 1000.0}`, `"exit_code":0`, nil},
		{"run_command", `{"command": "echo hi", "timeout_ms": 1E+3}`, `"exit_code":0`, nil},
		// Numbers inside strings are the caller's text, never rewritten.
		{"run_command", `{"command": "echo \"1.0\" 1e3 '\\' 2.0e0", "timeout_ms": 1e3}`, `"preview":"1.0 1e3 \\ 2.0e0\n"`, nil},
		{"run_command", `{"command": "seq 1 100000", "preview": {"head_bytes": 1.0e1, "tail_bytes": 0.0}}`, `"preview":"1\n2\n3\n4\n5\n`, nil},
		{"read_file", `{"path": "doc.go", "line": 2e0, "limit": 1.0}`, `"startLine":2,"endLine":2`, nil},
		{"read_file", `{"path": "doc.go", "byte_offset": 0.0, "limit": 1e0}`, `"startLine":1,"endLine":1`, nil},
		{"read_tool_output", `{"id": ` + id + `, "offset": 2e0, "limit": 2.0e0}`, `"text":"2\n","nextOffset":4`, nil},
		{"grep_tool_output", `{"id": ` + id + `, "pattern": "^1999$", "max": 1e0, "context": 1.0, "offset": 0e5}`, `"line":1999`, nil},
		{"query_tool_output", `{"id": ` + id + `, "filter": ".", "offset": 0.0, "limit": 2e0}`, `"text":"1\n"`, nil},
		{"run_command", `{"command": "echo hi", "timeout_ms": 1.5}`, "", []string{"timeout_ms", "integer"}},
		{"read_file", `{"path": "doc.go", "limit": 2.5e-1}`, "", []string{"limit", "integer"}},
		{"read_tool_output", `{"id": ` + id + `, "limit": 1e21}`, "", []string{"limit 1e21 is out of range"}},
		{"read_tool_output", `{"id": ` + id + `, "offset": 100000000000000000000}`, "", []string{"offset 100000000000000000000 is out of range"}},
	} {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			out, err := tools[tc.tool].Call(ctx, json.RawMessage(tc.args))
			if tc.want == "" {
				if !errors.Is(err, scrollback.ErrArgument) {
					t.Fatalf("Call = %s, %v; want an argument error", out, err)
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				return
			}
			if err != nil || !strings.Contains(string(out), tc.want) {
				t.Errorf("Call = %.300s, %v; want a result with %s", out, err, tc.want)
			}
		})
	}
}

// TestRunCodeLargestTimeout: the largest timeout_ms run_code accepts runs
// the script, in this process and in a worker, its nested command
// included: no time arithmetic on it wraps around to a deadline already
// past (a worker killed at once, a command given no time).
func TestRunCodeLargestTimeout(t *testing.T) {
	codeModes(t, func(t *testing.T, sess *scrollback.Session) {
		res, err := sess.RunCode(context.Background(), scrollback.RunCodeInput{
			Code:      "const r = await tools.run_command({command: 'echo ok'}); return r.preview.trim() + ' ' + r.timed_out",
			TimeoutMS: math.MaxInt64 / int64(time.Millisecond),
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Error != nil || res.Preview != "ok false" {
			t.Errorf("value %q, error %v; want the script's value", res.Preview, res.Error)
		}
	})
}

// TestCodeToolErrorKind: a nested tool's error, caught in the script,
// carries the contract's error kind as its kind property, in this process
// and in a worker alike, so that a script can branch on it as an MCP
// client does on scrollback/error_kind.
func TestCodeToolErrorKind(t *testing.T) {
	codeModes(t, func(t *testing.T, sess *scrollback.Session) {
		big := strings.Repeat("é", 20000)
		res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{Command: "printf '%s' '" + big + "'"})
		if err != nil || res.OutputID == "" {
			t.Fatalf("run_command: %+v, %v", res, err)
		}
		for _, tc := range []struct{ call, kind string }{
			{`tools.read_tool_output({id: "out_nope"})`, scrollback.KindNotFound},
			{`tools.read_tool_output({id: "` + res.OutputID + `", offset: 1})`, scrollback.KindOffset},
			{`tools.read_tool_output({id: "` + res.OutputID + `", limit: 0})`, scrollback.KindArgument},
			{`tools.grep_tool_output({id: "` + res.OutputID + `", pattern: "("})`, scrollback.KindArgument},
			{`tools.read_file({path: "/no/such/file"})`, scrollback.KindNotFound},
		} {
			code := "try { await " + tc.call + "; return 'no error' } catch (e) { return [e instanceof Error, e.kind, e.message].join('|') }"
			out, err := sess.RunCode(context.Background(), scrollback.RunCodeInput{Code: code})
			if err != nil || out.Error != nil {
				t.Fatalf("%s: %+v, %v", tc.call, out.Error, err)
			}
			if want := "true|" + tc.kind + "|tools."; !strings.HasPrefix(out.Preview, want) {
				t.Errorf("%s: caught %q, want it to start %q", tc.call, out.Preview, want)
			}
		}
		// A script's own errors have no kind.
		out, err := sess.RunCode(context.Background(), scrollback.RunCodeInput{Code: "try { null.x } catch (e) { return String(e.kind) }"})
		if err != nil || out.Preview != "undefined" {
			t.Errorf("a script's own error: %q, %v; want no kind", out.Preview, err)
		}
	})
}

// TestCodeToolsAsDocumented: CodeTools lists the tools in the order its doc
// gives, each with both schemas and a Call, and no Description; the
// descriptions its doc names for them are there. (The doc said "in the order
// the contract lists them", which puts read_tool_output before read_file.)
func TestCodeToolsAsDocumented(t *testing.T) {
	sess := codeSession(t)
	var names []string
	for _, tool := range sess.CodeTools() {
		names = append(names, tool.Name)
		if tool.Description != "" || len(tool.InputSchema) == 0 || len(tool.OutputSchema) == 0 || tool.Call == nil {
			t.Errorf("%s: description %q, schemas %d and %d bytes, call %v", tool.Name, tool.Description, len(tool.InputSchema), len(tool.OutputSchema), tool.Call != nil)
		}
	}
	if got, want := strings.Join(names, ","), "run_command,read_file,read_tool_output,grep_tool_output,query_tool_output"; got != want {
		t.Errorf("CodeTools = %s, want %s as its doc says", got, want)
	}
	for _, doc := range []string{present.RunCommandDoc, present.ReadFileDoc, present.ReadToolOutputDoc, present.GrepToolOutputDoc, present.QueryToolOutputDoc} {
		if doc == "" {
			t.Error("a description CodeTools' doc names is empty")
		}
	}
}

// TestRunCodeExtraToolNameTaken: an extra tool named like a tool the script
// can already call (a session tool, or an earlier extra one) is an argument
// error naming it. Before, the later one silently replaced the other in
// the script's tools object, and the list of tools a script is told of
// named it twice. With RunCodeOver leaving the session's tool out, the
// name is free.
func TestRunCodeExtraToolNameTaken(t *testing.T) {
	ctx := context.Background()
	sess := codeSession(t)
	tool := func(name, answer string) codemode.Tool {
		return codemode.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`),
			Call: func(context.Context, json.RawMessage) (json.RawMessage, error) { return json.Marshal(answer) }}
	}
	for _, tc := range []struct {
		name  string
		own   []string
		extra []codemode.Tool
		taken string // "" = no error
	}{
		{"session tool", nil, []codemode.Tool{tool("read_file", "mine")}, "read_file"},
		{"two extras", nil, []codemode.Tool{tool("search", "a"), tool("search", "b")}, "search"},
		{"own tool left out", []string{"read_tool_output"}, []codemode.Tool{tool("read_file", "mine")}, ""},
		{"distinct", nil, []codemode.Tool{tool("search", "a"), tool("fetch", "b")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := sess.RunCodeOver(ctx, scrollback.RunCodeInput{Code: `return "ran"`}, tc.own, tc.extra...)
			if tc.taken == "" {
				if err != nil || res.Preview != "ran" {
					t.Errorf("RunCodeOver = %q, %v; want it to run", res.Preview, err)
				}
				return
			}
			var se *scrollback.Error
			if !errors.As(err, &se) || !errors.Is(err, scrollback.ErrArgument) || !strings.Contains(err.Error(), strconv.Quote(tc.taken)) {
				t.Errorf("RunCodeOver = %q, %v; want an argument error naming %q", res.Preview, err, tc.taken)
			}
		})
	}
}
