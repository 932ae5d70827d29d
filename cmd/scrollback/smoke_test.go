package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback/codemode"
)

// The smoke tests drive scrollback as a user's MCP client does: a process
// on stdio. They run the binary named by $SCROLLBACK_SMOKE_BIN (CI builds
// the release binary and names it, on Linux, macOS and Windows), else this
// test binary acting as scrollback. TestDockerSmoke runs the image named by
// $SCROLLBACK_DOCKER_IMAGE.

const asMainEnv = "SCROLLBACK_SMOKE_AS_MAIN"

func TestMain(m *testing.M) {
	codemode.WorkerMain() // a Code Mode worker of a server under test: its pool runs this executable
	if os.Getenv(asMainEnv) == "1" {
		os.Args = append(os.Args[:1], os.Args[2:]...) // drop the "--" before the real arguments
		main()
	}
	os.Exit(m.Run())
}

// scrollbackCmd is the command line that runs scrollback with args.
func scrollbackCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	if bin := os.Getenv("SCROLLBACK_SMOKE_BIN"); bin != "" {
		return exec.Command(bin, args...)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{"--"}, args...)...)
	cmd.Env = append(os.Environ(), asMainEnv+"=1")
	return cmd
}

// echoWord is printed by a command that means the same under sh (Linux,
// macOS, the Docker image) and cmd.exe (Windows).
const echoWord = "scrollback-smoke-7d1e"

func TestRunSmoke(t *testing.T) {
	cmd := scrollbackCmd(t, "run", "--db", filepath.Join(t.TempDir(), "smoke.db"), "--", "echo "+echoWord)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), echoWord) {
		t.Fatalf("scrollback run -- echo: %v\n%s", err, out)
	}
}

func TestMCPStdioSmoke(t *testing.T) {
	cmd := scrollbackCmd(t, "mcp")
	cmd.Env = append(cmd.Environ(), "SCROLLBACK_DB="+filepath.Join(t.TempDir(), "smoke.db"))
	checkMCPServer(t, cmd)
}

// TestDockerSmoke runs the image as Claude Desktop's configuration does,
// `docker run -i --rm -v VOLUME:/data IMAGE mcp`, where Docker can run it.
func TestDockerSmoke(t *testing.T) {
	image := os.Getenv("SCROLLBACK_DOCKER_IMAGE")
	if image == "" {
		t.Skip("SCROLLBACK_DOCKER_IMAGE is not set: build the image (docker build -t scrollback:smoke .) and name it there")
	}
	if out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput(); err != nil {
		t.Skipf("no Docker engine to run the image here: docker info: %v: %s", err, strings.TrimSpace(string(out)))
	}
	volume := "scrollback-smoke-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	t.Cleanup(func() { exec.Command("docker", "volume", "rm", "-f", volume).Run() })
	checkMCPServer(t, exec.Command("docker", "run", "-i", "--rm", "-v", volume+":/data", image, "mcp"))
}

// checkMCPServer lists the tools of the server cmd starts and runs a
// command through run_command.
func checkMCPServer(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd.Stderr = &logWriter{t}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "smoke", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", strings.Join(cmd.Args, " "), err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"run_command", "read_tool_output", "grep_tool_output"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list has no %s: %v", want, names)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo " + echoWord}})
	if err != nil {
		t.Fatalf("run_command: %v", err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	if res.IsError || !strings.Contains(text.String(), echoWord) {
		t.Errorf("run_command echo: error %v, text %q", res.IsError, text.String())
	}
}

type logWriter struct{ t *testing.T }

func (w *logWriter) Write(p []byte) (int, error) {
	w.t.Logf("server: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
