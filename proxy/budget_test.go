package proxy

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
)

// TestToolBudgetBoundsPreview: whatever budget a tool has, from the
// smallest allowed (scrollback.MinShownBytes) up, the text of its result
// over that budget is never larger than it, whatever the text: lines,
// one long line, multi-byte characters, error lines the footer lists,
// JSON the footer outlines, bytes that are not UTF-8.
func TestToolBudgetBoundsPreview(t *testing.T) {
	var errs strings.Builder
	for i := range 400 {
		fmt.Fprintf(&errs, "step %d ok\nerror: step %d failed: something went wrong in a long explanation\n", i, i)
	}
	texts := map[string]string{
		"lines":     bigText(100 << 10),
		"one line":  strings.Repeat("x", 100<<10),
		"multibyte": strings.Repeat("é€😀", 10<<10),
		"errors":    errs.String(),
		"json":      `{"items":[` + strings.Repeat(`{"name":"a long enough name","value":12345,"tags":["x","y"]},`, 2000) + `{}]}`,
		"invalid":   strings.Repeat("ab\xff\xfe", 10<<10),
	}
	for _, budget := range []int{scrollback.MinShownBytes, scrollback.MinShownBytes + 1, 600, 777, 1000, scrollback.ShownBudget - 1, scrollback.ShownBudget, scrollback.ShownBudget + 1, 2000} {
		_, _, cs := inProcess(t, Options{ToolBudgets: map[string]int{"echo": budget}})
		for name, text := range texts {
			res := call(t, cs, "echo", map[string]any{"text": text})
			if got := len(firstText(res)); got > budget {
				t.Errorf("budget %d, %s: the preview is %d bytes", budget, name, got)
			}
		}
	}
}

// TestNewRefusesTinyBudgets: a budget below scrollback.MinShownBytes has
// no room for a head, a tail and the footer that leads to the rest, so a
// preview could not stay within it: New refuses it, naming the tool and
// the smallest budget allowed, rather than show more than asked.
func TestNewRefusesTinyBudgets(t *testing.T) {
	eng := newEngine(t)
	up := Upstream{Dial: dialServer(testUpstream())}
	for _, opts := range []Options{
		{Budget: 100},
		{Budget: scrollback.MinShownBytes - 1},
		{ToolBudgets: map[string]int{"echo": 10}},
		{ToolBudgets: map[string]int{"echo": 1000, "big": scrollback.MinShownBytes - 1}},
	} {
		_, err := New(eng, up, opts)
		if err == nil || !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), fmt.Sprint(scrollback.MinShownBytes)) {
			t.Errorf("New(%+v): got %v, want ErrBudget naming %d", opts, err, scrollback.MinShownBytes)
		}
	}
	for _, opts := range []Options{
		{},
		{Budget: scrollback.MinShownBytes},
		{ToolBudgets: map[string]int{"echo": scrollback.MinShownBytes}},
	} {
		p, err := New(eng, up, opts)
		if err != nil {
			t.Errorf("New(%+v): %v", opts, err)
			continue
		}
		p.Close()
	}
}

// firstText is the first text block of res.
func firstText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	return ""
}
