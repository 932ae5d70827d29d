// Package e2e tests scrollback's MCP server with real MCP clients: the
// official TypeScript SDK's client (client.mjs) over stdio and streamable
// HTTP, and the MCP Inspector's CLI mode (mcp-inspector --cli). The clients come from npm, pinned
// in package-lock.json: run `npm ci --prefix e2e` before `go test ./...`.
// Set SCROLLBACK_SKIP_E2E=1 to skip these tests explicitly.
package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const marker = "MARKER: the one line the model must find 4b9e1c"

const lineFormat = "line %07d of the generated output, paged through by MCP\n"

// lineCount lines make a little over 2 MiB.
var lineCount = 2<<20/len(fmt.Sprintf(lineFormat, 1)) + 2

// genCommand prints expected() and appends a line to counter each time it
// runs, so the test can tell it ran once.
func genCommand(counter string) string {
	return fmt.Sprintf(`echo ran >> '%s'; awk 'BEGIN { for (i = 1; i <= %d; i++) { if (i == %d) print "%s"; else printf "%s", i } }'`,
		counter, lineCount, lineCount/2, marker, strings.ReplaceAll(lineFormat, "\n", `\n`))
}

// expected is what genCommand prints, made again here.
func expected() []byte {
	var b bytes.Buffer
	for i := 1; i <= lineCount; i++ {
		if i == lineCount/2 {
			b.WriteString(marker + "\n")
			continue
		}
		fmt.Fprintf(&b, lineFormat, i)
	}
	return b.Bytes()
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// setup checks for node and the npm packages, and builds scrollback once.
// Missing tools fail the test with what to run, unless SCROLLBACK_SKIP_E2E=1.
func setup(t *testing.T) (bin, nodeBin string) {
	t.Helper()
	if os.Getenv("SCROLLBACK_SKIP_E2E") == "1" {
		t.Skip("SCROLLBACK_SKIP_E2E=1: end-to-end tests with real MCP clients skipped")
	}
	nodeBin, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed: the end-to-end tests need Node 20 or later and `npm ci --prefix e2e` (or set SCROLLBACK_SKIP_E2E=1 to skip them)")
	}
	for _, pkg := range []string{"@modelcontextprotocol/sdk", "@modelcontextprotocol/inspector"} {
		if _, err := os.Stat(filepath.Join("node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("e2e/node_modules/%s is missing: run `npm ci --prefix e2e` from the repository root (or set SCROLLBACK_SKIP_E2E=1 to skip these tests)", pkg)
		}
	}
	return buildScrollback(t), nodeBin
}

// binaryTest begins a test that runs only the scrollback binary (no Node
// client): skipped with SCROLLBACK_SKIP_E2E=1, parallel with the others.
// It returns the binary's path.
func binaryTest(t *testing.T) string {
	t.Helper()
	if os.Getenv("SCROLLBACK_SKIP_E2E") == "1" {
		t.Skip("SCROLLBACK_SKIP_E2E=1: end-to-end tests skipped")
	}
	t.Parallel()
	return buildScrollback(t)
}

// buildScrollback builds the scrollback binary once for all the tests.
func buildScrollback(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "scrollback-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "scrollback")
		out, err := exec.Command("go", "build", "-o", binary, "../cmd/scrollback").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binary != "" {
		os.RemoveAll(filepath.Dir(binary))
	}
	os.Exit(code)
}

// env is a clean environment whose state lives in dir.
func env(dir string, extra ...string) []string {
	e := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "XDG_STATE_HOME=" + filepath.Join(dir, "state"), "XDG_CACHE_HOME=" + filepath.Join(dir, "cache")}
	return append(e, extra...)
}

type summary struct {
	Session    string `json:"session"`
	OutputID   string `json:"output_id"`
	TotalBytes int64  `json:"totalBytes"`
	Pages      int    `json:"pages"`
	MarkerPage int    `json:"markerPage"`
}

// runClient runs client.mjs and checks what it paged through against the
// command's output, and that the command ran once.
func runClient(t *testing.T, nodeBin, dir string, args ...string) summary {
	t.Helper()
	counter := filepath.Join(dir, "counter")
	out := filepath.Join(dir, "pages.out")
	cmd := exec.Command(nodeBin, append([]string{"client.mjs", args[0], out, genCommand(counter), marker, "--"}, args[1:]...)...)
	cmd.Env = env(dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := run(cmd, 3*time.Minute); err != nil {
		t.Fatalf("client.mjs %s: %v\nstderr:\n%s", args[0], err, stderr.String())
	}
	var s summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		t.Fatalf("client.mjs printed %q: %v", stdout.String(), err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := expected()
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("the pages (%d bytes) differ from the command's output (%d bytes) at byte %d", len(got), len(want), i)
	}
	if len(want) < 2<<20 || s.TotalBytes != int64(len(want)) || s.Pages < len(want)/4096 || s.MarkerPage < 1 {
		t.Errorf("summary %+v for %d bytes", s, len(want))
	}
	if ran, _ := os.ReadFile(counter); string(ran) != "ran\n" {
		t.Errorf("the command ran %d times", strings.Count(string(ran), "ran"))
	}
	t.Logf("%s: %d bytes in %d pages, marker on page %d, session %s", args[0], s.TotalBytes, s.Pages, s.MarkerPage, s.Session)
	return s
}

// run runs cmd with a deadline.
func run(cmd *exec.Cmd, d time.Duration) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return fmt.Errorf("timed out after %s", d)
	}
}

func TestTypeScriptClientStdio(t *testing.T) {
	bin, nodeBin := setup(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "scrollback.db")
	s := runClient(t, nodeBin, dir, "stdio", bin, "mcp", "--db", db)

	// The session outlives the server: a new server resumes it.
	// stdout only: stderr says where the next page starts.
	out, err := exec.Command(bin, "read", "--db", db, "--session", s.Session, "--limit", "5", s.OutputID).Output()
	if err != nil || string(out) != "line " {
		t.Errorf("reading the copy after the server stopped: %q %v", out, err)
	}
}

func TestTypeScriptClientHTTP(t *testing.T) {
	bin, nodeBin := setup(t)
	dir := t.TempDir()
	const token = "e2e-token-7d1f0c55a2b94e3c"
	url := startHTTP(t, bin, dir, filepath.Join(dir, "scrollback.db"), "SCROLLBACK_TOKEN="+token)

	// Without the token: 401, and nothing else.
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token: %s, want 401", resp.Status)
	}
	runClient(t, nodeBin, dir, "http", url, "Authorization=Bearer "+token)
}

// startHTTP starts `scrollback mcp --http 127.0.0.1:0 --db DB` and returns the URL
// it prints on stderr; the server is stopped when the test ends.
func startHTTP(t *testing.T, bin, dir, db string, extraEnv ...string) string {
	t.Helper()
	return startHTTPArgs(t, bin, dir, []string{"mcp", "--http", "127.0.0.1:0", "--db", db}, extraEnv...)
}

// startHTTPArgs starts `scrollback ARGS...`, an MCP or proxy server over
// HTTP, and returns the URL it prints on stderr; the server is stopped
// when the test ends.
func startHTTPArgs(t *testing.T, bin, dir string, args []string, extraEnv ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env(dir, extraEnv...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("the server did not stop within 10 s of SIGTERM")
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`serving (?:MCP|\d+ upstream tools) on (http://\S+/mcp)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not print its address within 30 s")
		return ""
	}
}

// TestInspectorCLI lists the tools with the MCP Inspector's CLI mode and
// reads a copy at an offset inside a character: a tool error with a clear
// message, not a protocol failure.
func TestInspectorCLI(t *testing.T) {
	bin, nodeBin := setup(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "scrollback.db")
	e := env(dir)

	sess := strings.TrimSpace(mustRun(t, e, bin, "session", "new", "--db", db))
	var rc struct {
		OutputID string `json:"output_id"`
	}
	out := mustRun(t, e, bin, "run", "--db", db, "--session", sess, "--json", "--", `printf 'é%.0s' $(seq 20000)`)
	if err := json.Unmarshal([]byte(out), &rc); err != nil || rc.OutputID == "" {
		t.Fatalf("scrollback run: %q %v", out, err)
	}

	// The Inspector's own launcher (the package's bin), in CLI mode.
	inspector := filepath.Join("node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")
	server := []string{bin, "mcp", "--db", db, "--session", sess}
	list := mustRun(t, e, nodeBin, append(append([]string{inspector, "--cli"}, server...), "--method", "tools/list")...)
	var tools struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(list), &tools); err != nil {
		t.Fatalf("tools/list printed %q: %v", list, err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = len(tool.InputSchema) > 0 && len(tool.OutputSchema) > 0
	}
	for _, n := range []string{"run_command", "read_tool_output", "read_file"} {
		if !names[n] {
			t.Errorf("tools/list: %s missing or without schemas: %s", n, list)
		}
	}

	// The Inspector prints the result and exits 5 for a tool error; a
	// protocol failure would print no result.
	call := exec.Command(nodeBin, append(append([]string{inspector, "--cli"}, server...),
		"--method", "tools/call", "--tool-name", "read_tool_output", "--tool-arg", "id="+rc.OutputID, "offset=1")...)
	call.Env = e
	var stdout, stderr bytes.Buffer
	call.Stdout, call.Stderr = &stdout, &stderr
	err := run(call, 2*time.Minute)
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 5) {
		t.Fatalf("inspector tools/call: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "tool_is_error") {
		t.Errorf("the Inspector did not report a tool error: %s", stderr.String())
	}
	got := stdout.String()
	var res struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(got), &res); err != nil {
		t.Fatalf("tools/call printed %q: %v", got, err)
	}
	if !res.IsError || len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, "offset 1 is inside a multi-byte UTF-8 character") ||
		!strings.Contains(res.Content[0].Text, "0 (before) and 2 (after)") {
		t.Errorf("bad offset: %s", got)
	}
}

func mustRun(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := run(cmd, 2*time.Minute); err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// TestCodeCorpusTypeScriptClient runs Code Mode's corpus of model-written
// scripts through `scrollback mcp` with the TypeScript SDK client, against
// the expectations the root package's TestCodeCorpus checks in process,
// and failing scripts (TypeScript errors, limits with async code) for their
// error's kind and line.
func TestCodeCorpusTypeScriptClient(t *testing.T) {
	bin, nodeBin := setup(t)
	dir := t.TempDir()
	corpus, err := filepath.Abs(filepath.Join("..", "codemode", "testdata", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nodeBin, "code_corpus.mjs", corpus, "--", bin, "mcp", "--db", filepath.Join(dir, "scrollback.db"))
	cmd.Env = env(dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := run(cmd, 3*time.Minute); err != nil {
		t.Fatalf("code_corpus.mjs: %v\nstderr:\n%s", err, stderr.String())
	}
	var s struct{ Scripts, Passed, Errors, ErrorsPassed int }
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil || s.Scripts < 30 || s.Passed != s.Scripts || s.Errors == 0 || s.ErrorsPassed != s.Errors {
		t.Fatalf("code_corpus.mjs printed %q (%v)", stdout.String(), err)
	}
	t.Logf("%d of %d scripts gave their expected value, %d of %d failing scripts their error, through the TypeScript SDK client", s.Passed, s.Scripts, s.ErrorsPassed, s.Errors)
}
