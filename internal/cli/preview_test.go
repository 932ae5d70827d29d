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
// a footer, or over the contract's 8 KiB, is a usage error, for mcp and
// proxy alike.
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
	for _, tc := range []struct{ n, want string }{
		{"100", "--preview-bytes 100: give at least 512 bytes"},
		{"8193", "--preview-bytes 8193: give at most 8192 bytes"},
	} {
		for _, cmd := range [][]string{{"mcp"}, {"proxy", "--", "true"}} {
			var stderr bytes.Buffer
			code := Main(t.Context(), append([]string{cmd[0], "--preview-bytes", tc.n}, cmd[1:]...), IO{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &stderr, Getenv: func(string) string { return "" }})
			if code != 2 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("%s --preview-bytes %s: exit %d, stderr %q, want 2 and %q", cmd, tc.n, code, stderr.String(), tc.want)
			}
		}
	}
}
