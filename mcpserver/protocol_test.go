package mcpserver

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
)

// connectAt connects a client to srv that asks for protocol version.
func connectAt(t *testing.T, srv *mcp.Server, version string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestResourceLinkByVersion: the resource_link content block came with
// protocol 2025-06-18; a client of an older version, whose content union
// has no such type, would reject the whole result (a strict client fails
// the call), so it gets only the text blocks, whose footer names the copy.
func TestResourceLinkByVersion(t *testing.T) {
	eng, _ := newEngine(t, filepager.Options{})
	for _, tc := range []struct {
		version string
		link    bool
	}{
		{"2024-11-05", false},
		{"2025-03-26", false},
		{"2025-06-18", true},
		{"2025-11-25", true},
	} {
		t.Run(tc.version, func(t *testing.T) {
			sess, err := eng.NewSession(context.Background(), scrollback.LocalOwner)
			if err != nil {
				t.Fatal(err)
			}
			cs := connectAt(t, NewServer(sess, Options{}), tc.version)
			if got := cs.InitializeResult().ProtocolVersion; got != tc.version {
				t.Fatalf("negotiated %s, want %s", got, tc.version)
			}
			res := call(t, cs, "run_command", map[string]any{"command": "seq 1 30000"})
			links := 0
			for _, c := range res.Content {
				if _, ok := c.(*mcp.ResourceLink); ok {
					links++
				}
			}
			if tc.link != (links == 1) || links > 1 {
				t.Errorf("%d resource_link blocks, want link=%v", links, tc.link)
			}
			if res.IsError || len(res.Content) == 0 {
				t.Fatalf("result: %+v", res)
			}
		})
	}
}
