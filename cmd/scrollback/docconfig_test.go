package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tailscale/hujson"
)

// docConfig is one MCP server entry of a client configuration in the
// documents.
type docConfig struct {
	where   string            // file:line, server name
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// documentedConfigs reads the MCP client configurations of README.md and
// docs/*.md: the ```json blocks with mcpServers (Claude Desktop, Cursor,
// Claude Code, Windsurf, Gemini CLI), servers (VS Code) or
// context_servers (Zed). Each must parse.
func documentedConfigs(t *testing.T) []docConfig {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join("..", "..", "README.md")}, files...)
	block := regexp.MustCompile("(?ms)^```jsonc?\\n(.*?)^```")
	var configs []docConfig
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range block.FindAllSubmatchIndex(b, -1) {
			text := b[m[2]:m[3]]
			if !regexp.MustCompile(`"(mcpServers|servers|context_servers)"\s*:`).Match(text) {
				continue
			}
			line := 1 + strings.Count(string(b[:m[2]]), "\n")
			where := fmt.Sprintf("%s:%d", filepath.Base(f), line)
			std, err := hujson.Standardize(slices.Clone(text))
			if err != nil {
				t.Errorf("%s: the configuration does not parse: %v", where, err)
				continue
			}
			var doc map[string]map[string]docConfig
			if err := json.Unmarshal(std, &doc); err != nil {
				t.Errorf("%s: the configuration does not parse as a client's: %v", where, err)
				continue
			}
			for _, key := range []string{"mcpServers", "servers", "context_servers"} {
				for name, c := range doc[key] {
					c.where = where + " " + name
					configs = append(configs, c)
				}
			}
		}
	}
	return configs
}

// scrollbackArgs turns a documented command line into scrollback's
// arguments: the binary itself (scrollback, a full path to it), the npm
// launcher (npx -y scrollback@latest) or the image (docker run ... IMAGE)
// all run scrollback with what follows.
func scrollbackArgs(command string, args []string) ([]string, error) {
	base := strings.TrimSuffix(filepath.Base(strings.ReplaceAll(command, `\`, "/")), ".exe")
	switch base {
	case "scrollback":
		return args, nil
	case "npx":
		for i, a := range args {
			if a == "scrollback" || strings.HasPrefix(a, "scrollback@") {
				return args[i+1:], nil
			}
			if !strings.HasPrefix(a, "-") {
				break
			}
		}
	case "docker":
		for i, a := range args {
			if a == "ghcr.io/scrollback-dev/scrollback" || strings.HasPrefix(a, "ghcr.io/scrollback-dev/scrollback:") {
				if args[0] != "run" || !slices.Contains(args[:i], "-i") {
					return nil, fmt.Errorf("docker %s: want docker run -i ... IMAGE, so that stdio reaches it", strings.Join(args, " "))
				}
				return args[i+1:], nil
			}
		}
	}
	return nil, fmt.Errorf("%s %s does not start scrollback", command, strings.Join(args, " "))
}

// TestDocumentedClientConfigs starts every MCP server that the documented
// client configurations describe, as the client would, with scrollback
// as the smoke tests run it (scrollbackCmd: the binary CI names, else this
// test binary acting as scrollback), and lists its tools. A proxy's upstream command (an
// npm server, which would need the network) is replaced with scrollback
// mcp; a url entry is served by scrollback mcp --http on a free port, with
// the token its Authorization header sends.
func TestDocumentedClientConfigs(t *testing.T) {
	configs := documentedConfigs(t)
	if len(configs) < 6 {
		t.Fatalf("found %d documented client configurations; the documents have more: the parsing missed them", len(configs))
	}
	if testing.Short() {
		t.Skip("starts servers")
	}
	for _, c := range configs {
		t.Run(c.where, func(t *testing.T) {
			dir := t.TempDir()
			env := []string{"SCROLLBACK_DB=" + filepath.Join(dir, "scrollback.db"), "SCROLLBACK_TOKEN="}
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "docs", Version: "v0"}, nil)
			var transport mcp.Transport
			want := "run_command"
			switch {
			case c.Command != "":
				args, err := scrollbackArgs(c.Command, c.Args)
				if err != nil {
					t.Fatal(err)
				}
				if len(args) > 0 && args[0] == "proxy" {
					if i := slices.Index(args, "--"); i >= 0 {
						up := scrollbackCmd(t, "mcp")
						args = append(append(args[:i+1:i+1], up.Path), up.Args[1:]...)
					}
					want = "read_tool_output"
				}
				cmd := scrollbackCmd(t, args...)
				cmd.Dir, cmd.Env, cmd.Stderr = dir, append(cmd.Environ(), env...), &logWriter{t}
				transport = &mcp.CommandTransport{Command: cmd}
			case c.URL != "":
				u, err := url.Parse(c.URL)
				if err != nil || u.Path != "/mcp" {
					t.Fatalf("url %q: want http://HOST:PORT/mcp (%v)", c.URL, err)
				}
				token, _ := strings.CutPrefix(c.Headers["Authorization"], "Bearer ")
				addr := serveHTTP(t, dir, append(env, "SCROLLBACK_TOKEN="+token))
				u.Host = addr
				transport = &mcp.StreamableClientTransport{Endpoint: u.String(), HTTPClient: &http.Client{Transport: headers(c.Headers)}}
			default:
				t.Fatal("neither a command nor a url")
			}
			cs, err := client.Connect(ctx, transport, nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			if !slices.ContainsFunc(tools.Tools, func(tool *mcp.Tool) bool { return tool.Name == want }) {
				t.Errorf("tools/list has no %s", want)
			}
		})
	}
}

// headers is an http.RoundTripper that sends the configuration's headers.
type headers map[string]string

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// serveHTTP starts scrollback mcp --http on a free loopback port, with env
// added to its environment, and returns its address once it says it serves.
func serveHTTP(t *testing.T, dir string, env []string) string {
	t.Helper()
	cmd := scrollbackCmd(t, "mcp", "--http", "127.0.0.1:0")
	cmd.Dir, cmd.Env = dir, append(cmd.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	serving := regexp.MustCompile(`serving MCP on http://([^/\s]+)/mcp`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := serving.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
				break
			}
			t.Logf("server: %s", sc.Text())
		}
		io.Copy(io.Discard, stderr)
	}()
	select {
	case addr := <-found:
		return addr
	case <-time.After(time.Minute):
		t.Fatal("scrollback mcp --http did not say where it serves within a minute")
		return ""
	}
}
