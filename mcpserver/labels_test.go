package mcpserver

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzCutMessage checks that an over-long error message is cut to the bound
// at a character boundary: from valid UTF-8, the result is valid UTF-8.
func FuzzCutMessage(f *testing.F) {
	f.Add(strings.Repeat("é", maxMessage))
	f.Add(strings.Repeat("a", maxMessage-1) + "🙂")
	f.Fuzz(func(t *testing.T, msg string) {
		if !utf8.ValidString(msg) {
			return
		}
		r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
		cutMessage(r)
		got := r.Content[0].(*mcp.TextContent).Text
		if !utf8.ValidString(got) || len(got) > maxMessage+100 {
			t.Fatalf("cutMessage(%d bytes) = %q", len(msg), got)
		}
	})
}
