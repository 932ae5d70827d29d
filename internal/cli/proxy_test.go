package cli

import (
	"context"
	"io"
	"strings"
	"testing"
)

// TestProxySessionHelp: over stdio the proxy keeps its copies in a new
// session unless told one (as scrollback mcp does), and its --help says so
// rather than the database's default session other commands use.
func TestProxySessionHelp(t *testing.T) {
	stdio := IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	for _, c := range commands {
		if c.name != "proxy" {
			continue
		}
		fs := helpFlags(context.Background(), c, stdio)
		if fs == nil {
			t.Fatal("no flags")
		}
		f := fs.Lookup("session")
		if f == nil {
			t.Fatal("no --session flag")
		}
		if strings.Contains(f.Usage, "default session") || !strings.Contains(f.Usage, "new session") {
			t.Errorf("--session: %q, want it to say that the default is a new session", f.Usage)
		}
		return
	}
	t.Fatal("no proxy command")
}
