package cli

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestProxySessionHelp: over stdio the proxy and the MCP server keep their
// copies in a new session unless told one, and their --help says so rather
// than the database's default session other commands use.
func TestProxySessionHelp(t *testing.T) {
	stdio := IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	seen := 0
	for _, c := range commands {
		if c.name != "proxy" && c.name != "mcp" {
			continue
		}
		seen++
		fs := helpFlags(context.Background(), c, stdio)
		if fs == nil {
			t.Fatalf("%s: no flags", c.name)
		}
		f := fs.Lookup("session")
		if f == nil {
			t.Fatalf("%s: no --session flag", c.name)
		}
		if strings.Contains(f.Usage, "default session") || !strings.Contains(f.Usage, "new session") {
			t.Errorf("%s --session: %q, want it to say that the default is a new session", c.name, f.Usage)
		}
	}
	if seen != 2 {
		t.Fatalf("found %d of the commands proxy and mcp", seen)
	}
}
