package e2e

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// rawAnswer is the answer to one raw JSON-RPC request of 2026-07-28.
type rawAnswer struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
	sessionID string // the Mcp-Session-Id response header
}

// rawRequest POSTs one request of protocol 2026-07-28 to url as a client
// with no SDK would: no initialize, no MCP session, the version and the
// capabilities in _meta and the headers the protocol asks for, the bearer
// token in Authorization.
func rawRequest(t *testing.T, url, token, method string, params map[string]any) rawAnswer {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	} else if uri, ok := params["uri"].(string); ok {
		req.Header.Set("Mcp-Name", uri)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	a := rawAnswer{sessionID: resp.Header.Get("Mcp-Session-Id")}
	var last string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			last = d
		} else if strings.HasPrefix(sc.Text(), "{") {
			last = sc.Text()
		}
	}
	if err := json.Unmarshal([]byte(last), &a); err != nil {
		t.Fatalf("%s: status %s, answer %q: %v", method, resp.Status, last, err)
	}
	return a
}

// tool decodes a tools/call answer.
func (a rawAnswer) tool(t *testing.T) *mcp.CallToolResult {
	t.Helper()
	if a.Error != nil {
		t.Fatalf("protocol error %d: %s", a.Error.Code, a.Error.Message)
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(a.Result, &res); err != nil {
		t.Fatalf("result %.300s: %v", a.Result, err)
	}
	return &res
}

// tokenFile writes a token file naming alice and bob.
func tokenFile(t *testing.T, dir string) (path, alice, bob string) {
	t.Helper()
	alice, bob = "alice-e2e-token-0123456789", "bob-e2e-token-9876543210"
	path = filepath.Join(dir, "tokens")
	if err := os.WriteFile(path, []byte("alice: "+alice+"\nbob: "+bob+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, alice, bob
}

// TestStatelessTwoServersOnePostgres: protocol 2026-07-28 over HTTP, as a
// client behind a load balancer speaks it. Two `scrollback mcp --http`
// processes share one PostgreSQL database; each request stands alone (no
// initialize, no MCP session) and acts on its token's default session.
// run_command in one request through one server; read_tool_output,
// grep_tool_output and resources/read in later requests through the
// other, raw and with the Go SDK's client; another token gets "no such
// id" through both.
func TestStatelessTwoServersOnePostgres(t *testing.T) {
	base := os.Getenv("SCROLLBACK_TEST_POSTGRES")
	if base == "" {
		if os.Getenv("SCROLLBACK_SKIP_POSTGRES") == "1" {
			t.Skip("SCROLLBACK_SKIP_POSTGRES=1: PostgreSQL tests skipped")
		}
		t.Fatal("SCROLLBACK_TEST_POSTGRES is not set: run `eval \"$(.ci/postgres.sh)\"` first (or set SCROLLBACK_SKIP_POSTGRES=1 to skip)")
	}
	bin := binaryTest(t)
	db := freshDatabase(t, base)
	dir := t.TempDir()
	tokens, alice, bob := tokenFile(t, dir)
	serve := func() string {
		return startHTTPArgs(t, bin, dir, []string{"mcp", "--http", "127.0.0.1:0", "--db", db, "--token-file", tokens, "--log-level", "warn"})
	}
	one, two := serve(), serve()

	counter := filepath.Join(dir, "counter")
	a := rawRequest(t, one, alice, "tools/call", map[string]any{"name": "run_command", "arguments": map[string]any{"command": genCommand(counter)}})
	if a.sessionID != "" {
		t.Errorf("a request of 2026-07-28 got an MCP session %q", a.sessionID)
	}
	res := a.tool(t)
	var run struct {
		OutputID   string `json:"output_id"`
		TotalBytes int64  `json:"totalBytes"`
	}
	decodeStructured(t, res, &run)
	session, _ := res.Meta["scrollback/session"].(string)
	if run.OutputID == "" || session == "" {
		t.Fatalf("run_command: %+v %v", run, res.Meta)
	}
	if link, ok := res.Content[len(res.Content)-1].(*mcp.ResourceLink); !ok || link.URI != "scrollback://output/"+run.OutputID || link.Size == nil || *link.Size != run.TotalBytes {
		t.Errorf("no resource_link to the copy last: %#v", res.Content[len(res.Content)-1])
	}
	want := string(expected())

	// Later requests, through the other server.
	page := rawRequest(t, two, alice, "tools/call", map[string]any{"name": "read_tool_output", "arguments": map[string]any{"id": run.OutputID, "limit": 64}}).tool(t)
	if page.IsError || textOf(page) == "" || !strings.HasPrefix(want, strings.SplitN(textOf(page), "\n[scrollback:", 2)[0]) || page.Meta["scrollback/session"] != session {
		t.Errorf("read_tool_output through the other server: %q %v", textOf(page), page.Meta)
	}
	grep := rawRequest(t, two, alice, "tools/call", map[string]any{"name": "grep_tool_output", "arguments": map[string]any{"id": run.OutputID, "pattern": marker}}).tool(t)
	if grep.IsError || !strings.Contains(textOf(grep), marker) {
		t.Errorf("grep_tool_output through the other server: %q", textOf(grep))
	}
	rr := rawRequest(t, two, alice, "resources/read", map[string]any{"uri": "scrollback://output/" + run.OutputID})
	var read mcp.ReadResourceResult
	if rr.Error != nil || json.Unmarshal(rr.Result, &read) != nil || len(read.Contents) != 1 || read.Contents[0].Text != want {
		t.Errorf("resources/read through the other server: %+v (%d contents)", rr.Error, len(read.Contents))
	}

	// The Go SDK's client at 2026-07-28 finds the same session on either.
	for _, u := range []string{one, two} {
		cs := connectHTTPAt(t, u, map[string]string{"Authorization": "Bearer " + alice}, "2026-07-28")
		if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
			t.Fatalf("the Go SDK's client negotiated %s", v)
		}
		res := callTool(t, cs, "read_tool_output", map[string]any{"id": run.OutputID, "offset": run.TotalBytes - 16})
		if res.IsError || textOf(res) == "" || res.Meta["scrollback/session"] != session {
			t.Errorf("the Go client through %s: %q %v", u, textOf(res), res.Meta)
		}
		r, err := cs.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "scrollback://output/" + run.OutputID})
		if err != nil || len(r.Contents) != 1 || r.Contents[0].Text != want {
			t.Errorf("the Go client's resources/read through %s: %v", u, err)
		}
	}
	if ran, _ := os.ReadFile(counter); string(ran) != "ran\n" {
		t.Errorf("the command ran %d times", strings.Count(string(ran), "ran"))
	}

	// Bob: the same "no such id" as an id that never was, raw and with the
	// Go client, through both servers.
	never := "out_" + strings.Repeat("q", 26)
	for _, u := range []string{one, two} {
		for _, id := range []string{run.OutputID, never} {
			r := rawRequest(t, u, bob, "tools/call", map[string]any{"name": "read_tool_output", "arguments": map[string]any{"id": id}}).tool(t)
			if !r.IsError || r.Meta["scrollback/error_kind"] != "not_found" || !strings.Contains(textOf(r), "no retained output with that id in this session") {
				t.Errorf("bob reading %s through %s: %v %q", id, u, r.IsError, textOf(r))
			}
			e := rawRequest(t, u, bob, "resources/read", map[string]any{"uri": "scrollback://output/" + id})
			if e.Error == nil || !strings.Contains(string(e.Error.Data), `"scrollback/error_kind":"not_found"`) {
				t.Errorf("bob fetching %s through %s: %+v", id, u, e.Error)
			}
		}
		cs := connectHTTPAt(t, u, map[string]string{"Authorization": "Bearer " + bob}, "2026-07-28")
		if r := callTool(t, cs, "read_tool_output", map[string]any{"id": run.OutputID}); !r.IsError || strings.Contains(textOf(r), marker) {
			t.Errorf("bob's Go client through %s: %q", u, textOf(r))
		}
	}
}

// refText is ref_upstream.mjs's text: numbered lines of 1- to 4-byte
// characters, at least n bytes.
func refText(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "line %07d é€😀\n", i)
	}
	return b.String()
}

// TestReferencePassing: behind `scrollback proxy --http`, in front of a
// real upstream process (ref_upstream.mjs, made with the TypeScript SDK),
// a 5 MiB result retained by one call reaches another tool byte for byte
// when the model passes scrollback://output/ID as its argument, and a byte
// range of it as ID#bytes=A-B; another token's reference to it is
// refused with not_found, and the upstream is not called.
func TestReferencePassing(t *testing.T) {
	bin, node := setup(t)
	dir := t.TempDir()
	tokens, alice, bob := tokenFile(t, dir)
	url := startHTTPArgs(t, bin, dir, []string{"proxy", "--http", "127.0.0.1:0", "--db", filepath.Join(dir, "sb.db"), "--token-file", tokens,
		"--log-level", "warn", "--", node, "ref_upstream.mjs"})
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			as := func(tok string) *mcp.ClientSession {
				return connectHTTPAt(t, url, map[string]string{"Authorization": "Bearer " + tok}, version)
			}
			ca, cb := as(alice), as(bob)
			text := refText(5 << 20)
			made := callTool(t, ca, "make", map[string]any{"n": 5 << 20})
			id, _ := made.Meta["scrollback/output_id"].(string)
			if made.IsError || id == "" || len(textOf(made)) > 40<<10 {
				t.Fatalf("make: error %v, id %q, %d bytes shown", made.IsError, id, len(textOf(made)))
			}
			sum := func(s string) string {
				h := sha256.Sum256([]byte(s))
				return fmt.Sprintf("%d %s", len(s), hex.EncodeToString(h[:]))
			}
			ref := "scrollback://output/" + id
			if got := callTool(t, ca, "digest", map[string]any{"text": ref}); got.IsError || textOf(got) != sum(text) {
				t.Errorf("the upstream got %q, want %q (the 5 MiB result byte for byte)", textOf(got), sum(text))
			}
			// Bytes 1000 to 2000 of the 23-byte lines: 1000 falls on a
			// digit of line 44 (which starts at 989), 2000 on the newline
			// of line 87; 1003 is inside line 44's é (1002 and 1003).
			if got := callTool(t, ca, "digest", map[string]any{"text": ref + "#bytes=1000-2000"}); got.IsError || textOf(got) != sum(text[1000:2000]) {
				t.Errorf("a byte range: %q, want %q", textOf(got), sum(text[1000:2000]))
			}
			if got := callTool(t, ca, "digest", map[string]any{"text": ref + "#bytes=1003-2000"}); !got.IsError || got.Meta["scrollback/error_kind"] != "offset" ||
				!strings.Contains(textOf(got), "nearest valid offsets are 1002 (before) and 1004 (after)") {
				t.Errorf("a range starting inside é: %q %v", textOf(got), got.Meta)
			}
			before := textOf(callTool(t, ca, "calls", map[string]any{}))
			foreign := callTool(t, cb, "digest", map[string]any{"text": ref})
			if !foreign.IsError || foreign.Meta["scrollback/error_kind"] != "not_found" || !strings.Contains(textOf(foreign), "no retained output with that id in this session") {
				t.Errorf("bob's reference to alice's copy: %v %q %v", foreign.IsError, textOf(foreign), foreign.Meta)
			}
			if after := textOf(callTool(t, ca, "calls", map[string]any{})); after != before {
				t.Errorf("the upstream was called for a refused reference: %s calls, then %s", before, after)
			}
		})
	}
}
