package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/mcpserver"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

func newEngine(t testing.TB) *scrollback.Engine {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return scrollback.New(st, scrollback.Options{})
}

// legacy is the protocol version before 2026-07-28 that the tests of
// what a server asks its client during a call (relays) speak.
const legacy = "2025-11-25"

// start starts a proxy in front of up and connects a client to it over
// in-memory transports, at protocol 2025-11-25.
func start(t testing.TB, up Upstream, opts Options, copts *mcp.ClientOptions) (*Proxy, *scrollback.Session, *mcp.ClientSession) {
	return startAt(t, up, opts, copts, legacy)
}

// startProxy starts a proxy of up over a fresh engine, stopped when the
// test ends, and makes a session for its client.
func startProxy(t testing.TB, up Upstream, opts Options) (*Proxy, *scrollback.Session) {
	t.Helper()
	ctx := context.Background()
	eng := newEngine(t)
	p, err := New(eng, up, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	sess, err := eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	return p, sess
}

// startAt is start with the client asking for protocol version.
func startAt(t testing.TB, up Upstream, opts Options, copts *mcp.ClientOptions, version string) (*Proxy, *scrollback.Session, *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	p, sess := startProxy(t, up, opts)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := p.Server(sess).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, copts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return p, sess, cs
}

func inProcess(t testing.TB, opts Options) (*Proxy, *scrollback.Session, *mcp.ClientSession) {
	return start(t, Upstream{Dial: dialServer(testUpstream())}, opts, nil)
}

func call(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// readAll pages through a copy with read_tool_output, following
// nextOffset from 0.
func readAll(t testing.TB, cs *mcp.ClientSession, id string) (string, bool) {
	t.Helper()
	var b strings.Builder
	var off int64
	for {
		res := call(t, cs, "read_tool_output", map[string]any{"id": id, "offset": off})
		if res.IsError {
			t.Fatalf("read_tool_output: %s", text(res))
		}
		var page scrollback.Page
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatal(err)
		}
		b.WriteString(page.Text)
		off = page.NextOffset
		if !page.HasMore {
			return b.String(), page.Complete
		}
	}
}

func TestListTools(t *testing.T) {
	_, _, cs := inProcess(t, Options{ToolBudgets: map[string]int{"big": 1000}})
	up := map[string]*mcp.Tool{}
	direct := directClient(t, testUpstream(), legacy)
	for tool, err := range direct.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		up[tool.Name] = tool
	}
	got := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		got[tool.Name] = tool
	}
	for _, own := range []string{"read_tool_output", "grep_tool_output", "query_tool_output", "run_code"} {
		if got[own] == nil {
			t.Errorf("the proxy does not offer %s", own)
		}
	}
	if len(got) != len(up)+4 {
		t.Errorf("the proxy offers %d tools, want the upstream's %d plus 4", len(got), len(up))
	}
	for name, u := range up {
		g := got[name]
		if g == nil {
			t.Errorf("upstream tool %s is not re-exported", name)
			continue
		}
		if g.OutputSchema != nil {
			t.Errorf("%s: output schema %v is passed on; a preview cannot conform to it", name, g.OutputSchema)
		}
		if !reflect.DeepEqual(g.InputSchema, u.InputSchema) {
			t.Errorf("%s: input schema %v, want the upstream's %v", name, g.InputSchema, u.InputSchema)
		}
		if !strings.HasPrefix(g.Description, u.Description) || !strings.Contains(g.Description, "output_id") || !strings.Contains(g.Description, "instead of calling again") {
			t.Errorf("%s: description %q does not keep the upstream's and add the note", name, g.Description)
		}
	}
	if !strings.Contains(got["big"].Description, "over 1000 bytes") {
		t.Errorf("big's description does not name its own budget: %q", got["big"].Description)
	}
	if d := got["run_code"].Description; !strings.Contains(d, "  records(input: any): Promise<{ records: ") {
		t.Errorf("run_code's description does not declare the upstream tools with their result types:\n%s", d)
	}
	if ins := cs.InitializeResult().Instructions; !strings.Contains(ins, "upstream instructions") || !strings.Contains(ins, "preview is not the whole result") {
		t.Errorf("instructions %q lack the rule or the upstream's own", ins)
	}
}

// directClient connects a client straight to srv, asking for protocol
// version.
func directClient(t testing.TB, srv *mcp.Server, version string) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "direct"}, nil).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestSmallResultsPassThrough: a result within the budget reaches the
// client as the upstream made it, at either protocol version.
func TestSmallResultsPassThrough(t *testing.T) {
	for _, v := range []string{legacy, "2026-07-28"} {
		t.Run(v, func(t *testing.T) { testSmallResultsPassThrough(t, v) })
	}
}

func testSmallResultsPassThrough(t *testing.T, version string) {
	_, _, cs := startAt(t, Upstream{Dial: dialServer(testUpstream())}, Options{}, nil, version)
	if v := cs.InitializeResult().ProtocolVersion; v != version {
		t.Fatalf("negotiated %s, want %s", v, version)
	}
	direct := directClient(t, testUpstream(), version)
	for _, c := range []struct {
		tool string
		args any
	}{
		{"echo", map[string]any{"text": "hello é"}},
		{"big", map[string]any{"n": 32768}}, // exactly the budget
		{"records", map[string]any{"n": 3}},
		{"mixed", map[string]any{"n": 100}},
		{"big_error", map[string]any{"n": 50}},
	} {
		want := call(t, direct, c.tool, c.args)
		got := call(t, cs, c.tool, c.args)
		// Each server names itself in a result's _meta (protocol
		// 2026-07-28): the proxy, not its upstream.
		if info, _ := got.Meta[mcp.MetaKeyServerInfo].(map[string]any); version == "2026-07-28" && (info == nil || info["name"] != "scrollback-proxy") {
			t.Errorf("%s: serverInfo in _meta: %v, want the proxy's", c.tool, got.Meta)
		}
		delete(got.Meta, mcp.MetaKeyServerInfo)
		delete(want.Meta, mcp.MetaKeyServerInfo)
		wj, _ := json.Marshal(want)
		gj, _ := json.Marshal(got)
		if !bytes.Equal(wj, gj) {
			t.Errorf("%s: through the proxy\n%.300s\nwant, as called directly,\n%.300s", c.tool, gj, wj)
		}
	}
}

// meta returns the recovery reference in _meta, checking that the
// preview's footer names the same id.
func meta(t testing.TB, res *mcp.CallToolResult) (id string, total int64, complete bool) {
	t.Helper()
	id, _ = res.Meta[MetaOutputID].(string)
	f, _ := res.Meta[MetaTotalBytes].(float64)
	complete, _ = res.Meta[MetaComplete].(bool)
	if id == "" {
		t.Fatalf("no %s in _meta %v", MetaOutputID, res.Meta)
	}
	if !strings.Contains(text(res), id) {
		t.Errorf("the preview's footer does not name the output_id %s", id)
	}
	return id, int64(f), complete
}

func TestLargeResultsPreviewed(t *testing.T) {
	_, sess, cs := inProcess(t, Options{ToolBudgets: map[string]int{"echo": 1000}})
	for _, c := range []struct {
		name    string
		tool    string
		args    any
		want    string // the copy
		isError bool
		blocks  []string // content types in order
	}{
		// The preview where the text stood, the other blocks in order, and
		// last the link to the retained copy.
		{"text", "big", map[string]any{"n": 100_000}, bigText(100_000), false, []string{"text", "resource_link"}},
		{"one byte over", "big", map[string]any{"n": 32769}, bigText(32769), false, []string{"text", "resource_link"}},
		{"error", "big_error", map[string]any{"n": 50_000}, bigText(50_000), true, []string{"text", "resource_link"}},
		{"per-tool budget", "echo", map[string]any{"text": strings.Repeat("ab\n", 700)}, strings.Repeat("ab\n", 700), false, []string{"text", "resource_link"}},
		{"image and link kept", "mixed", map[string]any{"n": 40_000}, bigText(40_000), false, []string{"image", "text", "resource_link", "resource_link"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, cs, c.tool, c.args)
			if res.IsError != c.isError {
				t.Errorf("isError = %t, want %t", res.IsError, c.isError)
			}
			var kinds []string
			for _, b := range res.Content {
				raw, _ := json.Marshal(b)
				var k struct{ Type string }
				json.Unmarshal(raw, &k)
				kinds = append(kinds, k.Type)
			}
			if !reflect.DeepEqual(kinds, c.blocks) {
				t.Errorf("content blocks %v, want %v", kinds, c.blocks)
			}
			pv := text(res)
			if len(pv) > 32768 || !utf8.ValidString(pv) || !strings.Contains(pv, "read_tool_output") {
				t.Errorf("preview of %d bytes (valid UTF-8: %t) is not a preview with a footer", len(pv), utf8.ValidString(pv))
			}
			if res.StructuredContent != nil {
				t.Errorf("structuredContent passed on with a preview")
			}
			if res.Meta[MetaSession] != sess.ID() {
				t.Errorf("_meta session %v, want %s", res.Meta[MetaSession], sess.ID())
			}
			id, total, complete := meta(t, res)
			if total != int64(len(c.want)) || !complete {
				t.Errorf("totalBytes %d complete %t, want %d true", total, complete, len(c.want))
			}
			got, complete := readAll(t, cs, id)
			if got != c.want || !complete {
				t.Errorf("the pages (%d bytes) do not concatenate to the result (%d bytes)", len(got), len(c.want))
			}
			link, ok := res.Content[len(res.Content)-1].(*mcp.ResourceLink)
			if !ok || link.URI != mcpserver.OutputURI(id) || link.Size == nil || *link.Size != total || link.MIMEType != "text/plain" {
				t.Fatalf("last block %#v, want the resource_link of %s", res.Content[len(res.Content)-1], id)
			}
			rr, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: link.URI})
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != c.want {
				t.Errorf("resources/read of the link: %v", err)
			}
		})
	}
}

func TestStructuredContentRetained(t *testing.T) {
	_, _, cs := inProcess(t, Options{})
	res := call(t, cs, "records", map[string]any{"n": 3000})
	if res.StructuredContent != nil {
		t.Fatal("structuredContent of an oversize result was passed on")
	}
	id, _, _ := meta(t, res)
	got, _ := readAll(t, cs, id)
	var r records
	if err := json.Unmarshal([]byte(got), &r); err != nil || len(r.Records) != 3000 || r.Records[2999].Name != "name-2999" {
		t.Errorf("the copy is not the structured content as JSON: %v, %d records", err, len(r.Records))
	}
}

func TestCopyCap(t *testing.T) {
	_, sess, cs := inProcess(t, Options{})
	res := call(t, cs, "big", map[string]any{"n": 9 << 20})
	id, total, complete := meta(t, res)
	if total > scrollback.CopyCap || complete {
		t.Errorf("totalBytes %d complete %t, want at most %d, false", total, complete, scrollback.CopyCap)
	}
	var got strings.Builder
	if _, err := sess.Cat(context.Background(), id, &got); err != nil {
		t.Fatal(err)
	}
	checkHeadTail(t, got.String(), bigText(9<<20))
	if !strings.Contains(text(res), "incomplete") && !strings.Contains(text(res), "not complete") && !strings.Contains(text(res), "complete") {
		t.Errorf("the footer does not say the copy is incomplete:\n%s", tail(text(res), 600))
	}
}

func tail(s string, n int) string { return s[max(0, len(s)-n):] }

func TestTimeout(t *testing.T) {
	_, _, cs := inProcess(t, Options{CallTimeout: 200 * time.Millisecond})
	start := time.Now()
	res := call(t, cs, "hang", map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "did not answer within 200ms") {
		t.Errorf("a hung call gave %q, want a timeout tool error", text(res))
	}
	if d := time.Since(start); d > 20*time.Second { // "hang" never answers by itself
		t.Errorf("the timeout took %s", d)
	}
	// The proxy still serves after a timeout. Every call has the 200 ms
	// timeout, which a busy machine can make echo miss too: a call that
	// timed out is made again, any other answer is final.
	res = call(t, cs, "echo", map[string]any{"text": "still here"})
	for i := 0; i < 20 && res.IsError && strings.Contains(text(res), "did not answer within"); i++ {
		res = call(t, cs, "echo", map[string]any{"text": "still here"})
	}
	if text(res) != "still here" {
		t.Errorf("after a timeout, echo gave %q", text(res))
	}
}

func TestUpstreamErrorIsToolError(t *testing.T) {
	p, _, _ := inProcess(t, Options{})
	_, err := p.call(context.Background(), "no_such_tool", nil)
	if !errors.Is(err, ErrUpstreamError) || !strings.Contains(err.Error(), "no_such_tool") {
		t.Errorf("calling an unknown upstream tool: %v", err)
	}
}

func TestCrashRestarts(t *testing.T) {
	p, _, cs := start(t, commandUpstream(t), Options{}, nil)
	if n := p.UpstreamRestarts(); n != 0 {
		t.Errorf("restarts before a crash: %d", n)
	}
	// The call right after a crash must reach a new server, not the old
	// session before it is seen to be done: a few rounds give that race
	// its chances.
	const rounds = 3
	for round := range rounds {
		res := call(t, cs, "crash", map[string]any{})
		if !res.IsError || !strings.Contains(text(res), "failed during the call") || !strings.Contains(text(res), "exit status 3") {
			t.Errorf("round %d: a crash gave %q", round, text(res))
		}
		if res := call(t, cs, "echo", map[string]any{"text": "back"}); res.IsError || text(res) != "back" {
			t.Errorf("round %d: after a crash, echo gave %q (isError %t): the upstream was not restarted", round, text(res), res.IsError)
		}
	}
	if n := p.UpstreamRestarts(); n != rounds {
		t.Errorf("restarts after %d crashes: %d, want %d", rounds, n, rounds)
	}
}

func TestUpstreamDown(t *testing.T) {
	eng := newEngine(t)
	p, err := New(eng, Upstream{Command: []string{filepath.Join(t.TempDir(), "no-such-server")}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(context.Background()); !errors.Is(err, ErrUpstreamDown) {
		t.Errorf("Start with a missing command: %v, want ErrUpstreamDown", err)
	}
	if _, err := New(eng, Upstream{}, Options{}); !errors.Is(err, ErrNoUpstream) {
		t.Errorf("New without an upstream: %v", err)
	}
	if _, err := New(eng, Upstream{URL: "http://x", Command: []string{"x"}}, Options{}); !errors.Is(err, ErrNoUpstream) {
		t.Errorf("New with two upstreams: %v", err)
	}
}

func TestToolListChanged(t *testing.T) {
	var changed atomic.Int32
	_, _, cs := start(t, Upstream{Dial: dialServer(testUpstream())}, Options{}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
	})
	call(t, cs, "add_tool", map[string]any{"text": "extra"})
	// A hang detector: without the notification the wait never ends.
	deadline := time.Now().Add(30 * time.Second)
	for changed.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if changed.Load() == 0 {
		t.Fatal("the client was not told that the tool list changed")
	}
	if res := call(t, cs, "extra", map[string]any{}); text(res) != "I was added" {
		t.Errorf("the added tool gave %q", text(res))
	}
}

func TestPromptsAndResources(t *testing.T) {
	_, _, cs := inProcess(t, Options{})
	ctx := context.Background()
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "you"}})
	if err != nil || len(pr.Messages) != 1 || pr.Messages[0].Content.(*mcp.TextContent).Text != "hello you" {
		t.Errorf("prompt: %v %+v", err, pr)
	}
	for uri, want := range map[string]string{"test://r/1": "resource one", "test://t/7": "template test://t/7"} {
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != want {
			t.Errorf("resource %s: %v %+v", uri, err, rr)
		}
	}
	lr, err := cs.ListResources(ctx, nil)
	if err != nil || len(lr.Resources) != 1 {
		t.Errorf("list resources: %v %+v", err, lr)
	}
}

func TestRunCodeCallsUpstream(t *testing.T) {
	_, _, cs := inProcess(t, Options{})
	res := call(t, cs, "run_code", map[string]any{"code": `
		const text = tools.big({n: 100000});
		const recs = tools.records({n: 2});
		return {lines: text.split("\n").length, second: recs.records[1].name};`})
	if res.IsError {
		t.Fatalf("run_code: %s", text(res))
	}
	var out scrollback.RunCodeResult
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &out)
	if out.Error != nil || !strings.Contains(out.Preview, `"second":"name-1"`) {
		t.Errorf("script value %q, error %v", out.Preview, out.Error)
	}
	if len(out.Retained) != 1 || out.Retained[0].Tool != "big" || out.Retained[0].OutputID == "" {
		t.Fatalf("retained %+v, want the big result's copy", out.Retained)
	}
	if got, _ := readAll(t, cs, out.Retained[0].OutputID); got != bigText(100000) {
		t.Errorf("the bridge's copy (%d bytes) is not the result", len(got))
	}
}

// TestQueryProxiedJSON: an upstream's large JSON result is outlined in its
// preview, and the proxy's own query_tool_output runs jq over the copy.
func TestQueryProxiedJSON(t *testing.T) {
	_, _, cs := inProcess(t, Options{})
	res := call(t, cs, "records", map[string]any{"n": 3000})
	id, _, _ := meta(t, res)
	if pv := text(res); !strings.Contains(pv, `query_tool_output {"id":"`+id+`"`) || !strings.Contains(pv, "  .records: array of 3000, at ") {
		t.Errorf("the preview does not outline the JSON copy:\n%s", tail(pv, 1500))
	}
	res = call(t, cs, "query_tool_output", map[string]any{"id": id, "filter": "(.records | length), .records[2999].name"})
	if res.IsError || !strings.HasPrefix(text(res), "3000\n\"name-2999\"\n") {
		t.Errorf("query_tool_output through the proxy: %s", text(res))
	}
	var q scrollback.QueryResult
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &q); err != nil || q.TotalBytes != int64(len("3000\n\"name-2999\"\n")) || !q.Complete {
		t.Errorf("structuredContent %s: %v", raw, err)
	}
}

// TestRunCodeToolsAreTheProxys: a script behind the proxy calls exactly the
// tools the proxy lists (the upstream's and the proxy's own), never the
// proxy host's shell or files, and run_code's declaration says the same.
func TestRunCodeToolsAreTheProxys(t *testing.T) {
	_, _, cs := inProcess(t, Options{})
	for _, tt := range []struct{ name, code, want string }{
		{"run_command", `return tools.run_command({command: "echo host"})`, "tools has no tool run_command; the tools are "},
		{"read_file", `return tools.read_file({path: "/etc/hostname"})`, "tools has no tool read_file; the tools are "},
		{"echo", `return tools.echo({text: "up"})`, ""},
		{"read_tool_output", `return typeof tools.read_tool_output + typeof tools.grep_tool_output + typeof tools.query_tool_output`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, cs, "run_code", map[string]any{"code": tt.code})
			var out scrollback.RunCodeResult
			raw, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(raw, &out)
			if tt.want == "" {
				if out.Error != nil {
					t.Fatalf("error %v", out.Error)
				}
				return
			}
			if out.Error == nil || !strings.Contains(out.Error.Message, tt.want) || !strings.Contains(out.Error.Message, "echo") || !strings.Contains(out.Error.Message, "read_tool_output") {
				t.Fatalf("error %+v, value %q; want %q naming the proxy's tools", out.Error, out.Preview, tt.want)
			}
		})
	}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name != "run_code" {
			continue
		}
		for _, own := range []string{"run_command", "read_file"} {
			if strings.Contains(tool.Description, own) {
				t.Errorf("run_code's description names %s, which the proxy does not list", own)
			}
		}
		for _, want := range []string{"  echo(", "  read_tool_output(", "  grep_tool_output(", "  query_tool_output("} {
			if !strings.Contains(tool.Description, want) {
				t.Errorf("run_code's declaration lacks %s", strings.TrimSpace(want))
			}
		}
	}
}

// TestRunCodeCallsUpstreamRunCommand: an upstream tool named run_command
// is the one the proxy lists, so a script's tools.run_command calls it.
func TestRunCodeCallsUpstreamRunCommand(t *testing.T) {
	var changed atomic.Int32
	_, _, cs := start(t, Upstream{Dial: dialServer(testUpstream())}, Options{}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
	})
	call(t, cs, "add_tool", map[string]any{"text": "run_command"})
	// Until run_code declares it: the client may hear of the new tool
	// before run_code is registered again. A hang detector, not a timing.
	declared := func() bool {
		for tool, err := range cs.Tools(context.Background(), nil) {
			if err == nil && tool.Name == "run_code" {
				return strings.Contains(tool.Description, "  run_command(")
			}
		}
		return false
	}
	for deadline := time.Now().Add(30 * time.Second); (changed.Load() == 0 || !declared()) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	res := call(t, cs, "run_code", map[string]any{"code": `return tools.run_command({command: "echo host"})`})
	var out scrollback.RunCodeResult
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &out)
	if out.Error != nil || out.Preview != "I was added" {
		t.Errorf("tools.run_command gave %q, error %v; want the upstream tool's answer", out.Preview, out.Error)
	}
}

// TestRunCodeSeesEveryContentBlock: a result with an image or a resource
// link reaches the script as its content blocks, each as MCP gives it,
// not as its text alone (the image and the link dropped).
func TestRunCodeSeesEveryContentBlock(t *testing.T) {
	_, _, cs := inProcess(t, Options{})
	res := call(t, cs, "run_code", map[string]any{"code": `
		const r = tools.mixed({n: 100});
		return r.content.map(b => b.type + ":" + (b.mimeType || b.uri || b.text.length) + (b.data ? ":" + atobLen(b.data) : ""));
		function atobLen(s) { return s.length }`})
	var out scrollback.RunCodeResult
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &out)
	want := fmt.Sprintf(`["image:image/png:12","text:%d","resource_link:test://r/1"]`, utf8.RuneCountInString(bigText(100))) // 12: base64 of the 9 bytes; the text in characters
	if out.Error != nil || out.Preview != want {
		t.Errorf("value %q, error %v; want %s", out.Preview, out.Error, want)
	}
	res = call(t, cs, "run_code", map[string]any{"code": `return tools.echo({text: "plain"})`})
	raw, _ = json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &out)
	if out.Preview != "plain" {
		t.Errorf("a text-only result gave %q, want the text as a string", out.Preview)
	}
}

// TestContentValuePastTheCopyCap: binary data that would take a script's
// value past the copy cap is left out, its size said, the blocks kept.
func TestContentValuePastTheCopyCap(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	p, err := New(scrollback.New(st, scrollback.Options{Capture: capture.Limits{Copy: 1000}}), Upstream{Dial: dialServer(testUpstream())}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	img := bytes.Repeat([]byte{1}, 3000)
	v, err := p.codeValue(&mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: "caption"},
		&mcp.ImageContent{Data: img, MIMEType: "image/png"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://b", Blob: img}},
	}})
	want := `{"content":[{"text":"caption","type":"text"},{"dataBytes":3000,"mimeType":"image/png","type":"image"},{"resource":{"blobBytes":3000,"uri":"test://b"},"type":"resource"}]}`
	if err != nil || string(v) != want {
		t.Errorf("value %s, %v; want %s", v, err, want)
	}
}

// TestExportToolKeepsDescription: an upstream tool's description reaches
// the client as the upstream wrote it, whitespace included (servers that
// take it from a docstring indent it), and the note on previews follows
// it after one blank line.
func TestExportToolKeepsDescription(t *testing.T) {
	p := &Proxy{opts: Options{Budget: 1024}}
	note := previewNote(1024)
	for _, tt := range []struct{ in, want string }{
		{"Search.", "Search.\n\n" + note},
		{"\n    Search the catalogue.\n\n    Args: q.\n    ", "\n    Search the catalogue.\n\n    Args: q.\n    \n\n" + note},
		{"Search.\n", "Search.\n\n" + note},
		{"Search.\n\n", "Search.\n\n" + note},
		{"", note},
	} {
		got := p.exportTool(&mcp.Tool{Name: "t", Description: tt.in, InputSchema: map[string]any{"type": "object"}}).Description
		if got != tt.want {
			t.Errorf("description %q became %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestStructuredContentKeptInCopy: whenever a result is previewed, its
// structuredContent is not passed on but is in the copy: after the text
// when the text does not already carry it as JSON and only one of the two
// is over the budget; when both are, the text stands for both (a file
// server's {content: TEXT}), so that the copy is not the text twice.
func TestStructuredContentKeptInCopy(t *testing.T) {
	type in struct {
		Text       int  `json:"text"`       // bytes of text
		Structured int  `json:"structured"` // bytes of the structured string
		Same       bool `json:"same"`       // the text is the structured content's JSON
	}
	up := mcp.NewServer(&mcp.Implementation{Name: "sc", Version: "v1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "both"}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		sc := map[string]any{"s": strings.Repeat("s", a.Structured)}
		txt := strings.Repeat("t", a.Text)
		if a.Same {
			b, _ := json.MarshalIndent(sc, "", "  ")
			txt = string(b)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: txt}}, StructuredContent: sc}, nil, nil
	})
	_, _, cs := start(t, Upstream{Dial: dialServer(up)}, Options{}, nil)
	for _, tt := range []struct {
		name string
		in   in
		sc   bool // the copy holds the structured content after the text
	}{
		{"text over, structured small", in{Text: 40_000, Structured: 10}, true},
		{"text over, structured over", in{Text: 40_000, Structured: 40_000}, false},
		{"text small, structured over", in{Text: 10, Structured: 40_000}, true},
		{"text is the structured JSON", in{Structured: 40_000, Same: true}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := call(t, cs, "both", tt.in)
			if res.StructuredContent != nil {
				t.Fatal("structuredContent passed on with a preview")
			}
			id, _, _ := meta(t, res)
			got, _ := readAll(t, cs, id)
			sj := `{"s":"` + strings.Repeat("s", tt.in.Structured) + `"}`
			if has := strings.HasSuffix(got, "\n\n[structuredContent]\n"+sj); has != tt.sc {
				t.Errorf("the copy (%d bytes) holds the structured content after the text: %v, want %v", len(got), has, tt.sc)
			}
		})
	}
}

// TestToolsInUpstreamOrder: the upstream's tools are listed in the
// upstream's order (not the SDK's, which sorts by name), however many
// there are, the proxy's own after them.
func TestToolsInUpstreamOrder(t *testing.T) {
	for _, n := range []int{5, 1100} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			up := mcp.NewServer(&mcp.Implementation{Name: "many", Version: "v1"}, &mcp.ServerOptions{PageSize: 5000})
			var want []string
			for i := n - 1; i >= 0; i-- {
				name := fmt.Sprintf("t%04d", i)
				want = append(want, name)
				up.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{}, nil
				})
			}
			// The Go SDK lists by name: this upstream lists the other way.
			up.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					res, err := next(ctx, method, req)
					if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
						slices.Reverse(lr.Tools)
					}
					return res, err
				}
			})
			_, _, cs := start(t, Upstream{Dial: dialServer(up)}, Options{}, nil)
			var got []string
			for tool, err := range cs.Tools(context.Background(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, tool.Name)
			}
			want = append(want, "grep_tool_output", "query_tool_output", "read_tool_output", "run_code")
			if !slices.Equal(got, want) {
				i := 0
				for i < min(len(got), len(want)) && got[i] == want[i] {
					i++
				}
				t.Errorf("%d tools listed, want %d; the first difference at %d: %v, want %v", len(got), len(want), i, got[i:min(i+3, len(got))], want[i:min(i+3, len(want))])
			}
		})
	}
}

// TestEmbeddedResourcePreviewed: the text of an embedded resource in a
// tool result enters the conversation as a text block's does: over the
// budget it is previewed in place and retained, its reference in _meta and
// a resource_link; within it, the block passes unchanged.
func TestEmbeddedResourcePreviewed(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "embed", Version: "v1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "embed"}, func(_ context.Context, _ *mcp.CallToolRequest, in sizeArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "here:"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file:///x.txt", MIMEType: "text/plain", Text: bigText(in.N)}},
		}}, nil, nil
	})
	_, _, cs := start(t, Upstream{Dial: dialServer(up)}, Options{}, nil)

	res := call(t, cs, "embed", map[string]any{"n": 100})
	if er, ok := res.Content[1].(*mcp.EmbeddedResource); !ok || er.Resource.Text != bigText(100) || res.Meta[MetaOutputID] != nil {
		t.Errorf("a small embedded resource did not pass unchanged: %v", res.Meta)
	}

	res = call(t, cs, "embed", map[string]any{"n": 100_000})
	er, ok := res.Content[1].(*mcp.EmbeddedResource)
	if !ok || er.Resource.URI != "file:///x.txt" || len(er.Resource.Text) > 8192 || !strings.Contains(er.Resource.Text, "read_tool_output") {
		t.Fatalf("the embedded resource of 100,000 bytes is not previewed in place: %d bytes", len(er.Resource.Text))
	}
	if text(res) != "here:" {
		t.Errorf("the text block changed: %q", text(res))
	}
	id, _ := res.Meta[MetaOutputID].(string)
	total, _ := res.Meta[MetaTotalBytes].(float64)
	complete, _ := res.Meta[MetaComplete].(bool)
	if id == "" || !strings.Contains(er.Resource.Text, id) {
		t.Fatalf("the preview's footer and _meta do not name the copy: %v", res.Meta)
	}
	if got, _ := readAll(t, cs, id); got != bigText(100_000) || total != 100_000 || !complete {
		t.Errorf("the copy (%d bytes) is not the embedded text", len(got))
	}
	if link, ok := res.Content[len(res.Content)-1].(*mcp.ResourceLink); !ok || link.URI != mcpserver.OutputURI(id) {
		t.Errorf("no resource_link to the copy last: %T", res.Content[len(res.Content)-1])
	}
}

// TestPromptEmbeddedResourcePreviewed: a prompt's embedded resource over
// the budget is previewed in place and retained as a tool result's is,
// keeping its URI and its own _meta.
func TestPromptEmbeddedResourcePreviewed(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "embed", Version: "v1"}, nil)
	up.AddPrompt(&mcp.Prompt{Name: "doc"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.EmbeddedResource{
			Resource: &mcp.ResourceContents{URI: "file:///doc.txt", MIMEType: "text/plain", Text: bigText(100_000)},
			Meta:     mcp.Meta{"example/source": "upstream"},
		}}}}, nil
	})
	_, _, cs := start(t, Upstream{Dial: dialServer(up)}, Options{}, nil)

	pr, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: "doc"})
	if err != nil {
		t.Fatal(err)
	}
	er, ok := pr.Messages[0].Content.(*mcp.EmbeddedResource)
	if !ok || er.Resource.URI != "file:///doc.txt" || len(er.Resource.Text) > 8192 || !strings.Contains(er.Resource.Text, "read_tool_output") {
		t.Fatalf("the embedded resource of 100,000 bytes is not previewed in place: %T", pr.Messages[0].Content)
	}
	if er.Meta["example/source"] != "upstream" {
		t.Errorf("the embedded resource lost its _meta: %v", er.Meta)
	}
	id, _ := pr.Meta[MetaOutputID].(string)
	if got, _ := readAll(t, cs, id); id == "" || got != bigText(100_000) {
		t.Errorf("the copy %q (%d bytes) is not the embedded text", id, len(got))
	}
}
