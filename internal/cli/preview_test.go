package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPPreviewBytes: `scrollback mcp --preview-bytes N` shows at most N
// bytes of an output it retains, by default 2 KiB; a size with no room for
// a footer is a usage error.
func TestMCPPreviewBytes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		max  int
	}{{nil, 2048}, {[]string{"--preview-bytes", "4096"}, 4096}} {
		cs, _, stop := stdioMCP(t, filepath.Join(t.TempDir(), "m.db"), tc.args...)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "seq 1 200000"}})
		if err != nil || res.IsError {
			t.Fatalf("run_command: %v %+v", err, res)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if len(text) > tc.max || len(text) < tc.max/2 || !strings.Contains(text, "read_tool_output {") {
			t.Errorf("%v: a %d-byte preview, want at most %d with a footer:\n%s", tc.args, len(text), tc.max, text)
		}
		stop()
	}
	var stderr bytes.Buffer
	code := Main(t.Context(), []string{"mcp", "--preview-bytes", "100"}, IO{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr, Getenv: func(string) string { return "" }})
	if code != 2 || !strings.Contains(stderr.String(), "--preview-bytes 100: give at least 512 bytes") {
		t.Errorf("--preview-bytes 100: exit %d, stderr %q", code, stderr.String())
	}
}
