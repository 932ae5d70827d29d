package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// newEngine returns an engine over a fresh SQLite database in a temporary
// directory, and that directory.
func newEngine(t testing.TB, fo filepager.Options) (*scrollback.Engine, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(filepath.Join(dir, "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return scrollback.New(st, scrollback.Options{File: fo}), dir
}

// connect serves srv over in-memory transports and returns a connected
// client session.
func connect(t testing.TB, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	return connectAt(t, srv, "")
}

// newClient is a server over a new session of a fresh engine, and a client
// connected to it.
func newClient(t testing.TB) (*mcp.ClientSession, *scrollback.Session, string) {
	t.Helper()
	eng, dir := newEngine(t, filepager.Options{})
	sess, err := eng.NewSession(context.Background(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, NewServer(sess, Options{})), sess, dir
}

func call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// decode re-decodes a result's structured content into v.
func decode(t testing.TB, res *mcp.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res, 0))
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("structuredContent %s: %v", data, err)
	}
}

func text(res *mcp.CallToolResult, i int) string {
	if i >= len(res.Content) {
		return ""
	}
	if tc, ok := res.Content[i].(*mcp.TextContent); ok {
		return tc.Text
	}
	return fmt.Sprintf("<%T>", res.Content[i])
}

// bigOutput is what the large test command prints: n numbered lines of
// mixed-width UTF-8, with a marker line in the middle.
func bigOutput(n int, marker string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i == n/2 {
			b.WriteString(marker + "\n")
			continue
		}
		fmt.Fprintf(&b, "line %06d: héllo wörld — ✓ 😀\n", i)
	}
	return b.String()
}

// TestListTools checks the tools, their schemas (inferred from the
// engine's types, with the contract's names) and the server's instructions.
func TestListTools(t *testing.T) {
	cs, _, _ := newClient(t)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		required []string
		in, out  []string
		doc      []string
	}{
		"run_command": {
			required: []string{"command"},
			in:       []string{"command", "cwd", "timeout_ms", "env", "stdin"},
			out:      []string{"preview", "truncated", "output_id", "exit_code", "signal", "timed_out", "duration_ms", "stdout_bytes", "stderr_bytes", "totalBytes", "complete", "recovery", "recovery_error"},
			doc:      []string{"preview is not the whole result", "read_tool_output", "complete=false", "uncertain"},
		},
		"read_tool_output": {
			required: []string{"id"},
			in:       []string{"id", "offset", "limit"},
			out:      []string{"text", "nextOffset", "totalBytes", "hasMore", "complete"},
			doc:      []string{"hasMore=false", "complete=false", "uncertain", "nextOffset"},
		},
		"read_file": {
			required: []string{"path"},
			in:       []string{"path", "line", "limit", "byte_offset"},
			out:      []string{"text", "startLine", "endLine", "nextLine", "nextByteOffset", "totalBytes", "hasMore"},
			doc:      []string{"hasMore=false", "byte_offset", "absent"},
		},
		"grep_tool_output": {
			required: []string{"id", "pattern"},
			in:       []string{"id", "pattern", "ignore_case", "context", "max", "offset", "count"},
			out:      []string{"matches", "nextOffset", "hasMore", "count", "totalBytes", "complete"},
			doc:      []string{"count=true", "complete=false", "uncertain"},
		},
		"query_tool_output": {
			required: []string{"id", "filter"},
			in:       []string{"id", "filter", "offset", "limit"},
			out:      []string{"text", "nextOffset", "totalBytes", "hasMore", "complete"},
			doc:      []string{"jq", "gojq", "complete=false", "uncertain", "time limit", "output limit"},
		},
		"run_code": {
			required: []string{"code"},
			in:       []string{"code", "timeout_ms"},
			out:      []string{"preview", "truncated", "output_id", "totalBytes", "complete", "recovery", "logs", "error", "retained"},
			doc:      []string{"retained", "read_tool_output", "absent"},
		},
	}
	// Inputs whose name says what they are go without a description:
	// every byte of the schemas is sent with every request. The others
	// are named in the tool's description, which says their unit, range,
	// default or where the value comes from, or have a description.
	selfEvident := map[string]bool{"id": true, "path": true, "filter": true, "code": true, "command": true, "cwd": true, "stdin": true, "ignore_case": true, "count": true, "timeout_ms": true, "env": true}
	if len(res.Tools) != len(want) {
		t.Errorf("got %d tools, want %d", len(res.Tools), len(want))
	}
	for _, tool := range res.Tools {
		w, ok := want[tool.Name]
		if !ok {
			t.Errorf("unexpected tool %q", tool.Name)
			continue
		}
		in := schemaOf(t, tool.InputSchema)
		out := schemaOf(t, tool.OutputSchema)
		for _, p := range w.in {
			if _, ok := in.Properties[p]; !ok {
				t.Errorf("%s: input schema lacks %q", tool.Name, p)
			} else if in.Properties[p].Description == "" && !selfEvident[p] && !regexp.MustCompile(`\b`+p+`\b`).MatchString(tool.Description) {
				t.Errorf("%s: input %q has no description and the tool's description does not name it", tool.Name, p)
			}
		}
		if strings.Join(in.Required, ",") != strings.Join(w.required, ",") {
			t.Errorf("%s: required = %v, want %v", tool.Name, in.Required, w.required)
		}
		for _, p := range w.out {
			if _, ok := out.Properties[p]; !ok {
				t.Errorf("%s: output schema lacks %q", tool.Name, p)
			}
		}
		for _, d := range w.doc {
			if !strings.Contains(tool.Description, d) {
				t.Errorf("%s: description does not mention %q", tool.Name, d)
			}
		}
	}
	inst := cs.InitializeResult().Instructions
	for _, s := range []string{"preview is not the whole result", "read or search the copy", "pagination", "say it is uncertain, not absent", "hasMore=false", "complete=false"} {
		if !strings.Contains(inst, s) {
			t.Errorf("instructions do not say %q", s)
		}
	}
}

type schema struct {
	Type        any               `json:"type"`
	Properties  map[string]schema `json:"properties"`
	Required    []string          `json:"required"`
	Description string            `json:"description"`
}

func schemaOf(t *testing.T, v any) schema {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var s schema
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" {
		t.Fatalf("schema type %v, want object: %s", s.Type, data)
	}
	return s
}

// TestRunCommandAndPageThrough runs a command whose output does not fit the
// preview, then pages through its copy: the first text block is the
// preview with its footer naming the continuing call, the pages concatenate
// to the output byte for byte, and the command ran once.
func TestRunCommandAndPageThrough(t *testing.T) {
	cs, sess, dir := newClient(t)
	const marker = "MARKER-the-needle-7f3a"
	want := bigOutput(3000, marker)
	src := filepath.Join(dir, "out.txt")
	counter := filepath.Join(dir, "count")
	if err := os.WriteFile(src, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	res := call(t, cs, "run_command", map[string]any{"command": fmt.Sprintf("echo run >> %s; cat %s", counter, src)})
	var rc scrollback.RunCommandResult
	decode(t, res, &rc)
	if !rc.Truncated || rc.OutputID == "" || rc.Recovery != scrollback.RecoveryAvailable || !rc.Complete {
		t.Fatalf("result = %+v, want truncated, available, complete", rc)
	}
	if rc.TotalBytes != int64(len(want)) {
		t.Errorf("totalBytes = %d, want %d", rc.TotalBytes, len(want))
	}
	if got := text(res, 0); got != rc.Preview {
		t.Errorf("first text block is not the preview:\n%.200s", got)
	}
	if !strings.Contains(rc.Preview, rc.OutputID) || !strings.Contains(rc.Preview, "read_tool_output") {
		t.Errorf("preview footer does not name the continuing call:\n%s", rc.Preview)
	}
	if strings.Contains(rc.Preview, marker) {
		t.Errorf("the marker is in the preview: the test proves nothing")
	}
	if res.Meta[MetaSession] != sess.ID() {
		t.Errorf("_meta = %v, want %s = %s", res.Meta, MetaSession, sess.ID())
	}

	var got strings.Builder
	found := false
	for off, calls := int64(0), 0; ; calls++ {
		if calls > 1000 {
			t.Fatal("too many pages")
		}
		res := call(t, cs, "read_tool_output", map[string]any{"id": rc.OutputID, "offset": off})
		var p scrollback.Page
		decode(t, res, &p)
		if text(res, 0) != p.Text {
			t.Fatalf("first text block at %d is not the page text", off)
		}
		if res.Meta[MetaSession] != sess.ID() {
			t.Fatalf("_meta = %v", res.Meta)
		}
		got.WriteString(p.Text)
		found = found || strings.Contains(p.Text, marker)
		footer := text(res, 1)
		if p.HasMore != strings.Contains(footer, fmt.Sprintf(`"offset":%d`, p.NextOffset)) {
			t.Fatalf("footer %q does not match hasMore=%v nextOffset=%d", footer, p.HasMore, p.NextOffset)
		}
		if !p.HasMore {
			if !strings.Contains(footer, "end of the retained copy") {
				t.Errorf("last footer = %q", footer)
			}
			break
		}
		off = p.NextOffset
	}
	if !found {
		t.Error("marker not found paging through the copy")
	}
	if got.String() != want {
		t.Errorf("pages concatenate to %d bytes that differ from the %d-byte output", got.Len(), len(want))
	}
	if n, _ := os.ReadFile(counter); string(n) != "run\n" {
		t.Errorf("the command ran %q times", n)
	}
}

// TestRunCommandStatus: a non-zero exit and a timeout are results that the
// text blocks report, not tool errors.
func TestRunCommandStatus(t *testing.T) {
	cs, _, _ := newClient(t)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"command": "echo oops >&2; exit 3"}, "exited with status 3"},
		{map[string]any{"command": "sleep 5", "timeout_ms": 100}, "timed out"},
		{map[string]any{"command": "kill -9 $$"}, "killed by signal SIGKILL"},
		{map[string]any{"command": "true"}, "no output"},
		{map[string]any{"command": "cat", "stdin": "from stdin"}, "from stdin"},
		{map[string]any{"command": "echo $FOO", "env": map[string]string{"FOO": "bar"}}, "bar"},
	} {
		res := call(t, cs, "run_command", tc.args)
		if res.IsError {
			t.Errorf("%v: tool error %s", tc.args, text(res, 0))
			continue
		}
		all := text(res, 0) + text(res, 1)
		if !strings.Contains(all, tc.want) {
			t.Errorf("%v: text %q lacks %q", tc.args, all, tc.want)
		}
	}
}

// TestToolErrors: every kind of bad input is a tool error with a clear
// message, and the server goes on serving.
func TestToolErrors(t *testing.T) {
	cs, _, dir := newClient(t)
	res := call(t, cs, "run_command", map[string]any{"command": "printf 'aé%.0s' $(seq 20000)"})
	var rc scrollback.RunCommandResult
	decode(t, res, &rc)
	if rc.OutputID == "" {
		t.Fatal("no copy made")
	}
	big := strings.Repeat("x", 10<<20)
	if err := os.WriteFile(filepath.Join(dir, ".env"), []byte("SECRET=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tool string
		args any
		want []string
		kind string // the error kind in _meta
	}{
		{"unknown tool", "no_such_tool", map[string]any{}, []string{`unknown tool "no_such_tool"`, "run_command", "read_tool_output"}, "argument"},
		{"missing id", "read_tool_output", map[string]any{}, []string{"read_tool_output", "id"}, "argument"},
		{"wrong type", "read_tool_output", map[string]any{"id": rc.OutputID, "offset": "ten"}, []string{"read_tool_output", "offset"}, "argument"},
		{"wrong type id", "read_tool_output", map[string]any{"id": 42}, []string{"read_tool_output", "id"}, "argument"},
		{"unknown id", "read_tool_output", map[string]any{"id": "out_aaaaaaaaaaaaaaaaaaaaaaaaaa"}, []string{"no retained output with that id in this session"}, "not_found"},
		{"path id", "read_tool_output", map[string]any{"id": "../../../etc/passwd"}, []string{"no retained output with that id in this session"}, "not_found"},
		{"sql id", "read_tool_output", map[string]any{"id": "x' OR '1'='1'; DROP TABLE copies; --"}, []string{"no retained output with that id in this session"}, "not_found"},
		{"10 MiB id", "read_tool_output", map[string]any{"id": big}, []string{"no retained output with that id in this session", "bytes"}, "not_found"},
		{"offset inside a character", "read_tool_output", map[string]any{"id": rc.OutputID, "offset": 2}, []string{"inside a multi-byte UTF-8 character", "1 (before)", "3 (after)"}, "offset"},
		{"negative offset", "read_tool_output", map[string]any{"id": rc.OutputID, "offset": -1}, []string{"offset -1 is negative"}, "offset"},
		{"offset past the end", "read_tool_output", map[string]any{"id": rc.OutputID, "offset": rc.TotalBytes + 1}, []string{"past the end"}, "offset"},
		// Past what an int64 holds: still an offset out of range, said
		// so, not a decoder's message about Go types.
		{"offset past int64", "read_tool_output", map[string]any{"id": rc.OutputID, "offset": json.Number("100000000000000000000")}, []string{"read_tool_output: offset 100000000000000000000 is out of range", "totalBytes"}, "offset"},
		{"grep offset past int64", "grep_tool_output", map[string]any{"id": rc.OutputID, "pattern": "x", "offset": json.Number("1e30")}, []string{"offset 1e30 is out of range"}, "offset"},
		{"byte_offset past int64", "read_file", map[string]any{"path": "/etc/hostname", "byte_offset": json.Number("-100000000000000000000")}, []string{"byte_offset -100000000000000000000 is out of range"}, "offset"},
		{"limit past int64", "read_tool_output", map[string]any{"id": rc.OutputID, "limit": json.Number("100000000000000000000")}, []string{"read_tool_output: limit 100000000000000000000 is out of range", "see tools/list"}, "argument"},
		{"limit zero", "read_tool_output", map[string]any{"id": rc.OutputID, "limit": 0}, []string{"limit 0 is out of range", "1 to 4096"}, "argument"},
		{"limit too big", "read_tool_output", map[string]any{"id": rc.OutputID, "limit": 5000}, []string{"limit 5000"}, "argument"},
		{"empty command", "run_command", map[string]any{"command": " "}, []string{"command is empty"}, "argument"},
		{"missing command", "run_command", map[string]any{"cwd": "/"}, []string{"run_command", "command"}, "argument"},
		{"negative timeout", "run_command", map[string]any{"command": "true", "timeout_ms": -5}, []string{"negative"}, "argument"},
		{"missing cwd", "run_command", map[string]any{"command": "true", "cwd": filepath.Join(dir, "nope")}, []string{"run_command"}, "argument"},
		{"10 MiB command", "run_command", map[string]any{"command": "echo " + big}, []string{"run_command"}, "argument"},
		{"env of the wrong type", "run_command", map[string]any{"command": "true", "env": []string{"A=1"}}, []string{"run_command", "env"}, "argument"},
		{"missing path", "read_file", map[string]any{}, []string{"read_file", "path"}, "argument"},
		{"sensitive file", "read_file", map[string]any{"path": filepath.Join(dir, ".env")}, []string{"read_file"}, "sensitive"},
		{"no such file", "read_file", map[string]any{"path": filepath.Join(dir, "nope.txt")}, []string{"read_file"}, "not_found"},
		{"10 MiB path", "read_file", map[string]any{"path": big}, []string{"read_file"}, "argument"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if err != nil {
				t.Fatalf("protocol error, want a tool error: %v", err)
			}
			msg := text(res, 0)
			if !res.IsError {
				t.Fatalf("no tool error; text %.200q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %.300q lacks %q", msg, w)
				}
			}
			if len(msg) > 4096 {
				t.Errorf("message is %d bytes: a bad argument should not come back whole", len(msg))
			}
			if got := res.Meta[MetaErrorKind]; got != tc.kind {
				t.Errorf("%s = %v, want %q", MetaErrorKind, got, tc.kind)
			}
			if res.Meta[MetaSession] == nil && tc.tool != "no_such_tool" {
				t.Errorf("no %s in _meta of the error: %v", MetaSession, res.Meta)
			}
		})
	}
	// Still serving.
	res = call(t, cs, "run_command", map[string]any{"command": "echo still here"})
	if res.IsError || !strings.Contains(text(res, 0), "still here") {
		t.Errorf("after the errors: %v %q", res.IsError, text(res, 0))
	}
}

// TestSessionsAreSeparate: an id from one session reads, in another, like
// one that never existed; a resumed session reads its copies again after
// the store is closed and opened again.
func TestSessionsAreSeparate(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "scrollback.db")
	st, err := sqlite.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	eng := scrollback.New(st, scrollback.Options{})
	ctx := context.Background()
	a, _ := eng.NewSession(ctx, scrollback.LocalOwner)
	b, _ := eng.NewSession(ctx, scrollback.LocalOwner)
	ca, cb := connect(t, NewServer(a, Options{})), connect(t, NewServer(b, Options{}))

	var rc scrollback.RunCommandResult
	decode(t, call(t, ca, "run_command", map[string]any{"command": "seq 100000"}), &rc)
	if rc.OutputID == "" {
		t.Fatal("no copy")
	}
	other := call(t, cb, "read_tool_output", map[string]any{"id": rc.OutputID})
	missing := call(t, cb, "read_tool_output", map[string]any{"id": "out_" + strings.Repeat("a", 26)})
	if !other.IsError || !missing.IsError {
		t.Fatal("another session's copy was readable")
	}
	norm := func(s string) string { return strings.ReplaceAll(s, rc.OutputID, "ID") }
	if norm(text(other, 0)) != norm(strings.ReplaceAll(text(missing, 0), "out_"+strings.Repeat("a", 26), rc.OutputID)) {
		t.Errorf("another session's id reads differently from a missing one:\n%s\n%s", text(other, 0), text(missing, 0))
	}
	st.Close()

	// "Restart": a new store over the same file, the session resumed.
	st2, err := sqlite.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	eng2 := scrollback.New(st2, scrollback.Options{})
	again, err := eng2.Session(ctx, scrollback.LocalOwner, a.ID())
	if err != nil {
		t.Fatal(err)
	}
	c2 := connect(t, NewServer(again, Options{}))
	var p scrollback.Page
	decode(t, call(t, c2, "read_tool_output", map[string]any{"id": rc.OutputID, "offset": 0, "limit": 6}), &p)
	if p.Text != "1\n2\n3\n" || !p.HasMore {
		t.Errorf("after the restart: %+v", p)
	}
}

// TestConcurrentCalls: many calls at once on one session all get their
// own, right answers, and run concurrently.
func TestConcurrentCalls(t *testing.T) {
	cs, _, _ := newClient(t)
	var rc scrollback.RunCommandResult
	decode(t, call(t, cs, "run_command", map[string]any{"command": "seq 200000"}), &rc)
	want := seq(200000)

	// The commands meet at a barrier: each leaves its mark, then waits until
	// every command has left one. Calls run one after another would never
	// get past it, and each command gives up (exit 1) after 60 s.
	const n = 40
	barrier := t.TempDir()
	commands := 0
	for i := range n {
		if i%4 == 0 {
			commands++
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var res *mcp.CallToolResult
			var err error
			if i%4 == 0 {
				cmd := fmt.Sprintf(`touch %s/%d; i=0; while [ $(ls %s | wc -l) -lt %d ]; do i=$((i+1)); [ $i -gt 600 ] && exit 1; sleep 0.1; done; echo call %d`,
					barrier, i, barrier, commands, i)
				res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command",
					Arguments: map[string]any{"command": cmd}})
				if err == nil && !strings.Contains(text(res, 0), fmt.Sprintf("call %d\n", i)) {
					err = fmt.Errorf("call %d got %q", i, text(res, 0))
				}
			} else {
				off := int64(i * 1000)
				res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_tool_output",
					Arguments: map[string]any{"id": rc.OutputID, "offset": off, "limit": 100}})
				if err == nil && text(res, 0) != want[off:off+100] {
					err = fmt.Errorf("page at %d = %q", off, text(res, 0))
				}
			}
			if err == nil && res.IsError {
				err = fmt.Errorf("call %d: %s", i, text(res, 0))
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func seq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// TestDisconnectStopsCommand: a client that cancels its call, or whose
// connection drops mid-command (as when an agent's process dies), stops the
// command's whole process group.
func TestDisconnectStopsCommand(t *testing.T) {
	for _, how := range []string{"cancel", "drop"} {
		t.Run(how, func(t *testing.T) {
			eng, dir := newEngine(t, filepager.Options{})
			sess, _ := eng.NewSession(context.Background(), scrollback.LocalOwner)
			serverEnd, clientEnd := net.Pipe()
			ss, err := NewServer(sess, Options{}).Connect(context.Background(), &mcp.IOTransport{Reader: serverEnd, Writer: serverEnd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: clientEnd, Writer: clientEnd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			pidfile := filepath.Join(dir, "pid")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				// The child sleeps in the background of the shell: killing
				// only the shell would leave it running.
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command",
					Arguments: map[string]any{"command": fmt.Sprintf("sleep 60 & echo $! > %s; wait", pidfile)}})
				done <- err
			}()
			pid := waitPid(t, pidfile)
			if how == "cancel" {
				cancel()
			} else {
				clientEnd.Close()
			}
			<-done
			deadline := time.Now().Add(10 * time.Second)
			for processRunning(pid) {
				if time.Now().After(deadline) {
					killProcess(pid)
					t.Fatalf("the command's child %d still runs after the client went away", pid)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if how == "cancel" {
				// The session serves on.
				res := call(t, cs, "run_command", map[string]any{"command": "echo alive"})
				if !strings.Contains(text(res, 0), "alive") {
					t.Errorf("after the cancel: %q", text(res, 0))
				}
			}
		})
	}
}

func waitPid(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(file)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the command never started")
	return 0
}

// TestReadFile pages a file through MCP, confined to a root.
func TestReadFile(t *testing.T) {
	root := t.TempDir()
	eng, _ := newEngine(t, filepager.Options{Root: root, PageBytes: 1000})
	sess, _ := eng.NewSession(context.Background(), scrollback.LocalOwner)
	cs := connect(t, NewServer(sess, Options{}))
	want := bigOutput(200, "MIDDLE")
	path := filepath.Join(root, "f.txt")
	if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	args := map[string]any{"path": path}
	for i := 0; ; i++ {
		if i > 100 {
			t.Fatal("too many pages")
		}
		res := call(t, cs, "read_file", args)
		var p scrollback.FilePage
		decode(t, res, &p)
		if text(res, 0) != p.Text {
			t.Fatal("first text block is not the page")
		}
		got.WriteString(p.Text)
		if !p.HasMore {
			break
		}
		if !strings.Contains(text(res, 1), fmt.Sprintf(`"byte_offset":%d`, p.NextByteOffset)) {
			t.Fatalf("footer %q does not give the next call", text(res, 1))
		}
		args = map[string]any{"path": path, "byte_offset": p.NextByteOffset}
	}
	if got.String() != want {
		t.Error("pages do not concatenate to the file")
	}
	outside := filepath.Join(t.TempDir(), "g.txt")
	os.WriteFile(outside, []byte("x\n"), 0o644)
	if res := call(t, cs, "read_file", map[string]any{"path": outside}); !res.IsError {
		t.Errorf("read outside the root: %q", text(res, 0))
	}
}

// FuzzReadToolOutput reads a copy of mixed-width and invalid UTF-8 through
// MCP at any offset and limit. Invariants: the call is never a protocol
// error; a tool error names the problem; a page's text is valid UTF-8, is
// the first text block, and equals the copy's bytes from offset to
// nextOffset (invalid bytes shown as U+FFFD each).
func FuzzReadToolOutput(f *testing.F) {
	for _, seed := range []struct {
		off   int64
		limit int
	}{{0, 4096}, {1, 1}, {2, 3}, {-1, 10}, {100000, 5}, {7, 0}, {12, 4097}} {
		f.Add(seed.off, seed.limit)
	}
	cs, _, _ := newClient(f)
	// JSON cannot carry invalid UTF-8, so the command makes the bytes.
	data := []byte(strings.Repeat("aé✓😀\xff\xc3", 2000))
	res := call(f, cs, "run_command", map[string]any{"command": `printf 'a\303\251\342\234\223\360\237\230\200\377\303%.0s' $(seq 2000)`})
	var rc scrollback.RunCommandResult
	decode(f, res, &rc)
	if rc.OutputID == "" || rc.TotalBytes != int64(len(data)) {
		f.Fatalf("copy not made: %+v", rc)
	}
	f.Fuzz(func(t *testing.T, off int64, limit int) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "read_tool_output",
			Arguments: map[string]any{"id": rc.OutputID, "offset": off, "limit": limit}})
		if err != nil {
			t.Fatalf("protocol error: %v", err)
		}
		if res.IsError {
			msg := text(res, 0)
			if !strings.Contains(msg, "offset") && !strings.Contains(msg, "limit") {
				t.Fatalf("unclear error %q", msg)
			}
			return
		}
		var p scrollback.Page
		decode(t, res, &p)
		if !utf8.ValidString(p.Text) || text(res, 0) != p.Text {
			t.Fatalf("bad page text %q", p.Text)
		}
		if p.NextOffset < off || p.NextOffset > int64(len(data)) || p.NextOffset-off > int64(limit) {
			t.Fatalf("nextOffset %d for offset %d limit %d", p.NextOffset, off, limit)
		}
		if want := string(bytes.ToValidUTF8(data[off:p.NextOffset], nil)); strings.ReplaceAll(p.Text, "\uFFFD", "") != want {
			t.Fatalf("page %q is not the copy's bytes %d..%d", p.Text, off, p.NextOffset)
		}
	})
}

// TestGrepAndRunCode: the tools that build on retained copies work through
// MCP, with their text blocks leading on.
func TestGrepAndRunCode(t *testing.T) {
	cs, _, _ := newClient(t)
	var rc scrollback.RunCommandResult
	decode(t, call(t, cs, "run_command", map[string]any{"command": "seq 100000"}), &rc)

	res := call(t, cs, "grep_tool_output", map[string]any{"id": rc.OutputID, "pattern": "^9999[0-9]$", "max": 5})
	var g scrollback.GrepResult
	decode(t, res, &g)
	if len(g.Matches) != 5 || g.Matches[0].Line != 99990 || !g.HasMore {
		t.Errorf("grep: %+v", g)
	}
	if !strings.Contains(text(res, 0), "99990:588828: 99990\n") || !strings.Contains(text(res, 1), fmt.Sprintf(`"offset": %d`, g.NextOffset)) {
		t.Errorf("grep text: %q / %q", text(res, 0), text(res, 1))
	}

	res = call(t, cs, "run_code", map[string]any{"code": fmt.Sprintf(`return tools.read_tool_output({id: %q, offset: 0, limit: 4}).text`, rc.OutputID)})
	var code scrollback.RunCodeResult
	decode(t, res, &code)
	if code.Error != nil || !strings.Contains(text(res, 0), "1\n2\n") {
		t.Errorf("run_code: %q %+v", text(res, 0), code.Error)
	}
	// A script with no return statement, written as if its last
	// expression were its value, is told how to return one.
	// An empty string is a value: a filter that matched nothing.
	if got := text(call(t, cs, "run_code", map[string]any{"code": "return [].join('\\n')"}), 0); got != "(the script returned an empty string)" {
		t.Errorf("an empty string returned: %q", got)
	}
	for code, hint := range map[string]bool{"const r = 6 * 7;\nr": true, "if (false) return 1;": false} {
		res := call(t, cs, "run_code", map[string]any{"code": code})
		if got := text(res, 0); !strings.HasPrefix(got, present.NoValue) || strings.Contains(got, "return VALUE") != hint {
			t.Errorf("%q: %q, want the hint to return a value: %v", code, got, hint)
		}
	}
	// A script that stopped returned nothing: its error comes first,
	// not a claim that it returned.
	if res := call(t, cs, "run_code", map[string]any{"code": "console.log('a');\nthrow new Error('boom')"}); res.IsError || !strings.Contains(text(res, 0), "boom") || !strings.Contains(text(res, 1), "console:\na\n") {
		t.Errorf("a failing script: error=%v %q / %q", res.IsError, text(res, 0), text(res, 1))
	}
}

// TestWholeNumberArguments: over MCP every integer input takes a whole
// number written with an exponent or a zero fraction (1e3, 1000.0), as
// JSON Schema's "integer" does, and refuses 1.5 as a tool error naming
// the input. (The SDK validates the arguments as float64 values and
// re-encodes them before decoding, so this held before run_code's tools
// did the same in Go: the test keeps it.)
func TestWholeNumberArguments(t *testing.T) {
	cs, _, _ := newClient(t)
	var rc scrollback.RunCommandResult
	decode(t, call(t, cs, "run_command", map[string]any{"command": "seq 1 20000"}), &rc)
	if rc.OutputID == "" {
		t.Fatal("no copy made")
	}
	id := strconv.Quote(rc.OutputID)
	for _, tc := range []struct {
		tool, args string
		want       string // in the first text block; with bad, in the error
		bad        bool
	}{
		{"run_command", `{"command":"echo hi","timeout_ms":1e3}`, "hi", false},
		{"run_command", `{"command":"echo hi","timeout_ms":1000.0}`, "hi", false},
		{"run_command", `{"command":"seq 1 100000","preview":{"head_bytes":1.0e1,"tail_bytes":0.0}}`, "1\n2\n3\n4\n5\n", false},
		{"run_code", `{"code":"return 'ran'","timeout_ms":1e3}`, "ran", false},
		{"read_file", `{"path":"server.go","line":1e0,"limit":1.0,"byte_offset":0e0}`, "package mcpserver", false},
		{"read_tool_output", `{"id":` + id + `,"offset":2e0,"limit":2.0}`, "2\n", false},
		{"grep_tool_output", `{"id":` + id + `,"pattern":"^1999$","max":1e0,"context":1.0,"offset":0.0}`, "1999", false},
		{"query_tool_output", `{"id":` + id + `,"filter":".","offset":0.0,"limit":2e0}`, "1\n", false},
		{"run_command", `{"command":"echo hi","timeout_ms":1.5}`, "timeout_ms", true},
		{"run_code", `{"code":"return 1","timeout_ms":1.5}`, "timeout_ms", true},
		{"read_file", `{"path":"server.go","line":1.5}`, "line", true},
		{"read_tool_output", `{"id":` + id + `,"limit":2.5}`, "limit", true},
		{"grep_tool_output", `{"id":` + id + `,"pattern":"x","max":0.5}`, "max", true},
		{"grep_tool_output", `{"id":` + id + `,"pattern":"x","context":1.5}`, "context", true},
		{"query_tool_output", `{"id":` + id + `,"filter":".","offset":1.5}`, "offset", true},
	} {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			res := call(t, cs, tc.tool, json.RawMessage(tc.args))
			msg := text(res, 0)
			if res.IsError != tc.bad || !strings.Contains(msg, tc.want) {
				t.Errorf("isError %v, text %.300q; want isError %v and %q", res.IsError, msg, tc.bad, tc.want)
			}
			if tc.bad && !strings.Contains(msg, `integer"`) {
				t.Errorf("error %.300q does not say an integer is wanted", msg)
			}
		})
	}
}
