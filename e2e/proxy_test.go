package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The proxy's end-to-end tests put `scrollback proxy` in front of real MCP
// servers from npm (pinned in package-lock.json), and talk to it with the
// official Go SDK client, comparing with the same calls made to the server
// directly.

// upstreamBin returns the path of an npm-installed server's bin script,
// failing with what to run when node_modules lacks it.
func upstreamBin(t *testing.T, pkg, bin string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join("node_modules", pkg, "package.json")); err != nil {
		t.Fatalf("e2e/node_modules/%s is missing: run `npm ci --prefix e2e` from the repository root (or set SCROLLBACK_SKIP_E2E=1 to skip these tests)", pkg)
	}
	p, err := filepath.Abs(filepath.Join("node_modules", ".bin", bin))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// connectCmd starts cmd as an MCP server and connects a Go SDK client.
func connectCmd(t *testing.T, cmd *exec.Cmd) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to %v: %v", cmd.Args, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// proxied starts `scrollback proxy -- upstream...` with its state in dir.
func proxied(t *testing.T, bin, dir string, upstream ...string) *mcp.ClientSession {
	cmd := exec.Command(bin, append([]string{"proxy", "--db", filepath.Join(dir, "sb.db"), "--"}, upstream...)...)
	cmd.Env = env(dir)
	cmd.Stderr = os.Stderr
	return connectCmd(t, cmd)
}

func direct(t *testing.T, dir string, upstream ...string) *mcp.ClientSession {
	cmd := exec.Command(upstream[0], upstream[1:]...)
	cmd.Env = env(dir)
	return connectCmd(t, cmd)
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func textOf(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func toolNames(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	out := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = tool
	}
	return out
}

// jsonOf is v as JSON, without what the Go SDK's server adds to every
// result on its own (its serverInfo in _meta, resultType, cache fields),
// so that a result through the proxy compares with one got directly.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return string(b)
	}
	if meta, ok := m["_meta"].(map[string]any); ok {
		delete(meta, "io.modelcontextprotocol/serverInfo")
		if len(meta) == 0 {
			delete(m, "_meta")
		}
	}
	for _, k := range []string{"resultType", "ttlMs", "cacheScope"} {
		delete(m, k)
	}
	b, _ = json.Marshal(m)
	return string(b)
}

// TestProxyFilesystem reads a 3 MiB file through the proxy in front of
// @modelcontextprotocol/server-filesystem: a preview plus an output_id
// whose pages concatenate to the file byte for byte; a small file passes
// through unchanged.
func TestProxyFilesystem(t *testing.T) {
	bin, node := setup(t)
	fsBin := upstreamBin(t, "@modelcontextprotocol/server-filesystem", "mcp-server-filesystem")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o755)
	var big bytes.Buffer
	for i := 0; big.Len() < 3<<20; i++ {
		big.WriteString("ligne " + strings.Repeat("é", i%7) + " — numéro " + strings.Repeat("x", i%50) + "\n")
	}
	os.WriteFile(filepath.Join(data, "big.txt"), big.Bytes(), 0o644)
	os.WriteFile(filepath.Join(data, "small.txt"), []byte("a small file ✓\n"), 0o644)

	up := []string{node, fsBin, data}
	cs := proxied(t, bin, dir, up...)
	dcs := direct(t, dir, up...)

	tools := toolNames(t, cs)
	read := "read_text_file"
	if tools[read] == nil {
		read = "read_file"
	}
	if tools[read] == nil || tools["read_tool_output"] == nil || tools["run_code"] == nil {
		t.Fatalf("the proxy's tools lack %s, read_tool_output or run_code: %v", read, tools)
	}
	if tools[read].OutputSchema != nil {
		t.Errorf("%s keeps its output schema through the proxy", read)
	}

	// The small file: the same result as from the server itself.
	small := map[string]any{"path": filepath.Join(data, "small.txt")}
	if got, want := jsonOf(callTool(t, cs, read, small)), jsonOf(callTool(t, dcs, read, small)); got != want {
		t.Errorf("a small file through the proxy:\n%s\nwant, directly:\n%s", got, want)
	}

	// The big file: a preview with an id, and pages that rebuild it.
	res := callTool(t, cs, read, map[string]any{"path": filepath.Join(data, "big.txt")})
	if res.IsError {
		t.Fatalf("reading the big file: %.300s", textOf(res))
	}
	pv := textOf(res)
	id, _ := res.Meta["scrollback/output_id"].(string)
	if len(pv) > 32768 || id == "" || !strings.Contains(pv, id) {
		t.Fatalf("want a preview of at most 32768 bytes naming its output_id; got %d bytes, _meta %v", len(pv), res.Meta)
	}
	if res.StructuredContent != nil {
		t.Error("structuredContent passed on with a preview")
	}
	var copy strings.Builder
	var off float64
	for pages := 0; ; pages++ {
		page := callTool(t, cs, "read_tool_output", map[string]any{"id": id, "offset": off})
		if page.IsError {
			t.Fatalf("read_tool_output at %v: %s", off, textOf(page))
		}
		sc := page.StructuredContent.(map[string]any)
		copy.WriteString(sc["text"].(string))
		off = sc["nextOffset"].(float64)
		if !sc["hasMore"].(bool) {
			if !sc["complete"].(bool) {
				t.Error("the copy of a 3 MiB file says it is incomplete")
			}
			break
		}
	}
	if copy.String() != big.String() {
		t.Errorf("the pages (%d bytes) do not concatenate to the file (%d bytes)", copy.Len(), big.Len())
	}
}

// TestProxyEverything checks that the tools, prompts and resources of
// @modelcontextprotocol/server-everything work through the proxy as they
// do directly.
func TestProxyEverything(t *testing.T) {
	bin, node := setup(t)
	evBin := upstreamBin(t, "@modelcontextprotocol/server-everything", "mcp-server-everything")
	dir := t.TempDir()
	up := []string{node, evBin, "stdio"}
	cs := proxied(t, bin, dir, up...)
	dcs := direct(t, dir, up...)
	ctx := context.Background()

	tools, dtools := toolNames(t, cs), toolNames(t, dcs)
	for name, dt := range dtools {
		if name == "get-roots-list" {
			// Offered only to clients with roots: the Go SDK's client speaks
			// 2026-07-28, whose capabilities reach only an upstream of that
			// version, and this one speaks 2025-11-25.
			continue
		}
		pt := tools[name]
		if pt == nil {
			t.Errorf("tool %s is missing through the proxy", name)
			continue
		}
		if jsonOf(pt.InputSchema) != jsonOf(dt.InputSchema) || !strings.HasPrefix(pt.Description, dt.Description) {
			t.Errorf("tool %s changed through the proxy", name)
		}
	}
	if dtools["echo"] != nil {
		args := map[string]any{"message": "hello through the proxy"}
		if got, want := jsonOf(callTool(t, cs, "echo", args)), jsonOf(callTool(t, dcs, "echo", args)); got != want {
			t.Errorf("echo through the proxy: %s, directly: %s", got, want)
		}
	}

	prompts, err := dcs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	pprompts, err := cs.ListPrompts(ctx, nil)
	if err != nil || len(pprompts.Prompts) != len(prompts.Prompts) {
		t.Fatalf("prompts through the proxy: %v, %d of %d", err, len(pprompts.Prompts), len(prompts.Prompts))
	}
	tested := 0
	for _, p := range prompts.Prompts {
		args := map[string]string{}
		for _, a := range p.Arguments {
			if a.Required {
				args[a.Name] = "1"
			}
		}
		want, derr := dcs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: args})
		if derr != nil {
			continue
		}
		got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: args})
		if err != nil || jsonOf(got) != jsonOf(want) {
			t.Errorf("prompt %s through the proxy: %v\n%s\nwant\n%s", p.Name, err, jsonOf(got), jsonOf(want))
		}
		tested++
	}
	if tested == 0 {
		t.Error("no prompt could be got")
	}

	res, err := dcs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) == 0 {
		t.Fatalf("the server lists no resources: %v", err)
	}
	pres, err := cs.ListResources(ctx, nil)
	if err != nil || len(pres.Resources) == 0 {
		t.Fatalf("resources through the proxy: %v", err)
	}
	uri := pres.Resources[0].URI
	want, err := dcs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatal(err)
	}
	got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || jsonOf(got) != jsonOf(want) {
		t.Errorf("resource %s through the proxy: %v\n%.300s\nwant\n%.300s", uri, err, jsonOf(got), jsonOf(want))
	}
}

// TestProxyTypeScriptClient puts `scrollback proxy` in front of the real
// filesystem server and drives it with the official TypeScript SDK client:
// a 3 MiB file comes back as a preview whose pages rebuild it byte for
// byte; a small file passes through whole.
func TestProxyTypeScriptClient(t *testing.T) {
	bin, node := setup(t)
	fsBin := upstreamBin(t, "@modelcontextprotocol/server-filesystem", "mcp-server-filesystem")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o755)
	var big bytes.Buffer
	for i := 0; big.Len() < 3<<20; i++ {
		fmt.Fprintf(&big, "record %06d — ünïcödé 🚀 %s\n", i, strings.Repeat("x", i%40))
	}
	bigPath, smallPath := filepath.Join(data, "big.txt"), filepath.Join(data, "small.txt")
	os.WriteFile(bigPath, big.Bytes(), 0o644)
	os.WriteFile(smallPath, []byte("a small file ✓\n"), 0o644)

	out := filepath.Join(dir, "pages.out")
	cmd := exec.Command(node, "proxy_client.mjs", out, bigPath, smallPath, "--",
		bin, "proxy", "--db", filepath.Join(dir, "sb.db"), "--", node, fsBin, data)
	cmd.Env = env(dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := run(cmd, 3*time.Minute); err != nil {
		t.Fatalf("proxy_client.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	var s struct {
		Tool, OutputID, Small string
		PreviewBytes, Pages   int
	}
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("proxy_client.mjs printed %q: %v", stdout.String(), err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, big.Bytes()) {
		t.Fatalf("the pages (%d bytes) do not rebuild the file (%d bytes)", len(got), big.Len())
	}
	if s.Small != "a small file ✓\n" || s.Pages < big.Len()/4096 {
		t.Errorf("summary %+v", s)
	}
	t.Logf("%s through the proxy: preview %d bytes, %d pages of read_tool_output", s.Tool, s.PreviewBytes, s.Pages)
}

// relaySummary is what relay_client.mjs prints.
type relaySummary struct {
	Name                                   string
	Asks, Sampled, Progress, Logs, Updated int
}

// runRelayClient runs relay_client.mjs as client name, making n calls of
// "ask" at once, and checks its summary.
func runRelayClient(t *testing.T, node, dir, name string, n int, target ...string) {
	t.Helper()
	cmd := exec.Command(node, append([]string{"relay_client.mjs", name, fmt.Sprint(n)}, target...)...)
	cmd.Env = env(dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := run(cmd, 3*time.Minute); err != nil {
		t.Errorf("relay_client.mjs %s: %v\nstderr:\n%s", name, err, stderr.String())
		return
	}
	var s relaySummary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Errorf("relay_client.mjs %s printed %q: %v", name, stdout.String(), err)
		return
	}
	if want := (relaySummary{Name: name, Asks: n, Sampled: n, Progress: n, Logs: s.Logs, Updated: 2}); s != want || s.Logs < n {
		t.Errorf("client %s: %+v, want %+v with at least %d logs", name, s, want, n)
	}
}

// TestProxyRelayTypeScript: the official TypeScript SDK client, through
// the proxy, in front of an upstream made with the TypeScript SDK that
// samples, elicits and lists roots during its tool call, and sends
// progress, a log message and resource updates. Over stdio one client;
// over --http two clients at once whose handlers answer differently, each
// making three calls at once: each gets its own answers and is asked only
// for its own calls. Both renew their subscription after the upstream
// crashes (relay_client.mjs checks it all).
func TestProxyRelayTypeScript(t *testing.T) {
	bin, node := setup(t)
	up, err := filepath.Abs("relay_upstream.mjs")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("stdio", func(t *testing.T) {
		dir := t.TempDir()
		runRelayClient(t, node, dir, "A", 2, "--", bin, "proxy", "--db", filepath.Join(dir, "sb.db"), "--", node, up)
	})
	t.Run("http two clients", func(t *testing.T) {
		dir := t.TempDir()
		port := freePort(t)
		px := exec.Command(bin, "proxy", "--db", filepath.Join(dir, "sb.db"), "--http", fmt.Sprintf("127.0.0.1:%d", port), "--", node, up)
		px.Env = env(dir)
		start(t, px)
		waitListening(t, port)
		url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
		done := make(chan bool)
		for _, name := range []string{"A", "B"} {
			go func() {
				defer func() { done <- true }()
				runRelayClient(t, node, dir, name, 3, "--url", url)
			}()
		}
		<-done
		<-done
		// Each client's upstream process crashed once and was started
		// again; each client ended its session, which ends its process.
		metric := func(name string) string {
			res, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
			if err != nil {
				return err.Error()
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, name+" "); ok {
					return v
				}
			}
			return "missing"
		}
		if got := metric("scrollback_proxy_upstream_restarts_total"); got != "2" {
			t.Errorf("scrollback_proxy_upstream_restarts_total %s, want 2 (one per client's crash)", got)
		}
		for deadline := time.Now().Add(time.Minute); metric("scrollback_proxy_upstreams") != "0" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		}
		if got := metric("scrollback_proxy_upstreams"); got != "0" {
			t.Errorf("scrollback_proxy_upstreams %s after both clients ended their sessions, want 0", got)
		}
	})
}

// TestProxyCopiesTypeScript: through the proxy in front of the
// everything-server, over stdio and over --http, the official TypeScript
// SDK client finds a previewed result's copy in resources/list, reads it
// back (cacheScope private), passes a byte range of it to an upstream
// tool by reference, and is told tasks/* are not served
// (proxy_copies_client.mjs checks it all).
func TestProxyCopiesTypeScript(t *testing.T) {
	bin, node := setup(t)
	evBin := upstreamBin(t, "@modelcontextprotocol/server-everything", "mcp-server-everything")
	client := func(t *testing.T, dir string, target ...string) {
		cmd := exec.Command(node, append([]string{"proxy_copies_client.mjs"}, target...)...)
		cmd.Env = env(dir)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := run(cmd, 3*time.Minute); err != nil || strings.TrimSpace(stdout.String()) != "ok" {
			t.Errorf("proxy_copies_client.mjs: %v\nstdout: %s\nstderr:\n%s", err, stdout.String(), stderr.String())
		}
	}
	t.Run("stdio", func(t *testing.T) {
		dir := t.TempDir()
		client(t, dir, "--", bin, "proxy", "--budget", "512", "--db", filepath.Join(dir, "sb.db"), "--", node, evBin, "stdio")
	})
	t.Run("http", func(t *testing.T) {
		dir := t.TempDir()
		port := freePort(t)
		px := exec.Command(bin, "proxy", "--budget", "512", "--db", filepath.Join(dir, "sb.db"), "--http", fmt.Sprintf("127.0.0.1:%d", port), "--", node, evBin, "stdio")
		px.Env = env(dir)
		start(t, px)
		waitListening(t, port)
		client(t, dir, "--url", fmt.Sprintf("http://127.0.0.1:%d/mcp", port))
	})
}
