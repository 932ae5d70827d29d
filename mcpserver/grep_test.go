package mcpserver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/grep/greptest"
)

// TestGrepOneLineJSON: through a real MCP client, grep_tool_output finds a
// match anywhere in a 5 MiB one-line JSON document retained by
// run_command (past 1 MiB, in the middle, across a chunk boundary, at the
// end); each match shows a window of at most 1 KiB whose offset reads the
// match with read_tool_output; count: true counts the one line.
func TestGrepOneLineJSON(t *testing.T) {
	cs, _, dir := newClient(t)
	doc := greptest.OneLineJSON(5 << 20)
	file := filepath.Join(dir, "export.json")
	if err := os.WriteFile(file, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	var rc scrollback.RunCommandResult
	decode(t, call(t, cs, "run_command", map[string]any{"command": "cat " + file}), &rc)
	if rc.OutputID == "" || rc.TotalBytes != int64(len(doc)) || !rc.Complete {
		t.Fatalf("run_command: %+v", rc)
	}
	for _, needle := range []string{"NEEDLE-MID", "NEEDLE-EDGE", "NEEDLE-777", `NEEDLE-\d+"\}\]`, "(?i)needle-edge"} {
		res := call(t, cs, "grep_tool_output", map[string]any{"id": rc.OutputID, "pattern": needle})
		var g scrollback.GrepResult
		decode(t, res, &g)
		if len(g.Matches) != 1 || g.HasMore || g.NextOffset != int64(len(doc)) || !g.Complete {
			t.Fatalf("%s: %d matches, hasMore %v, nextOffset %d", needle, len(g.Matches), g.HasMore, g.NextOffset)
		}
		m := g.Matches[0]
		lit := strings.TrimPrefix(strings.TrimSuffix(needle, `\d+"\}\]`), "(?i)")
		lit = strings.ToUpper(lit)
		if m.Line != 1 || !m.Truncated || len(m.Text) > 1024 || !strings.Contains(m.Text, lit) {
			t.Errorf("%s: match %+v", needle, m)
		}
		if !strings.HasPrefix(string(doc[m.Offset:]), m.Text) {
			t.Errorf("%s: the text is not the copy's bytes at offset %d", needle, m.Offset)
		}
		var p scrollback.Page
		decode(t, call(t, cs, "read_tool_output", map[string]any{"id": rc.OutputID, "offset": m.Offset, "limit": 1024}), &p)
		if !strings.Contains(p.Text, lit) {
			t.Errorf("%s: read_tool_output at %d does not show the match", needle, m.Offset)
		}
		if !strings.Contains(text(res, 0), fmt.Sprintf("1:%d: ", m.Offset)) {
			t.Errorf("%s: text %.200q", needle, text(res, 0))
		}
	}
	res := call(t, cs, "grep_tool_output", map[string]any{"id": rc.OutputID, "pattern": "NEEDLE-", "count": true})
	var raw map[string]any
	decode(t, res, &raw)
	if want := map[string]any{"count": 1.0, "totalBytes": float64(len(doc)), "complete": true}; fmt.Sprint(raw) != fmt.Sprint(want) {
		t.Errorf("count: %v, want %v", raw, want)
	}
	if text(res, 0) != "1 line matches" {
		t.Errorf("count text: %q", text(res, 0))
	}
}

// TestGrepCount: count: true over seq 100000 through a real MCP client
// counts the lines a regular expression matches, exactly: a literal
// anchored at both ends is not a literal anywhere in the line.
func TestGrepCount(t *testing.T) {
	cs, _, _ := newClient(t)
	var rc scrollback.RunCommandResult
	decode(t, call(t, cs, "run_command", map[string]any{"command": "seq 1 100000"}), &rc)
	for _, c := range []struct {
		pattern string
		offset  int64
		want    int64
	}{
		{"^5000$", 0, 1}, {"^1$", 0, 1}, {"^(5000)$", 0, 1}, {`^5000\b`, 0, 1}, {"5000", 0, 20}, {"^1", 0, 11112},
		{`^\d{5}$`, 0, 90000}, {"^1$", 2, 0}, {"0$", 588889, 1},
	} {
		res := call(t, cs, "grep_tool_output", map[string]any{"id": rc.OutputID, "pattern": c.pattern, "count": true, "offset": c.offset})
		var g scrollback.GrepResult
		decode(t, res, &g)
		if g.Count != c.want || g.Matches != nil {
			t.Errorf("%q from %d: %+v, want count %d", c.pattern, c.offset, g, c.want)
		}
		b, _ := json.Marshal(res.StructuredContent)
		if strings.Contains(string(b), "matches") {
			t.Errorf("%q: a count result holds matches: %s", c.pattern, b)
		}
	}
	// Listing agrees with counting.
	var g scrollback.GrepResult
	decode(t, call(t, cs, "grep_tool_output", map[string]any{"id": rc.OutputID, "pattern": "^5000$"}), &g)
	if len(g.Matches) != 1 || g.Matches[0].Line != 5000 || g.Matches[0].Text != "5000" || g.HasMore {
		t.Errorf("^5000$: %+v", g)
	}
}
