package mcpserver

import (
	"fmt"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback"
)

// TestQueryToolOutput: a JSON command output too large for the preview
// gets an outline in its footer that names query_tool_output; the tool runs
// a filter over the copy, pages the results, and reports bad filters and
// non-JSON copies as tool errors.
func TestQueryToolOutput(t *testing.T) {
	cs, _, _ := newClient(t)
	// 3000 items, then a summary: about 100 KiB of JSON.
	cmd := `printf '{"items":['; i=1; while [ $i -le 3000 ]; do [ $i -gt 1 ] && printf ','; printf '{"id":%d,"name":"item-%d","ok":true}' $i $i; i=$((i+1)); done; printf '],"summary":{"count":3000,"failed":0}}\n'`
	var rc scrollback.RunCommandResult
	res := call(t, cs, "run_command", map[string]any{"command": cmd})
	decode(t, res, &rc)
	if !rc.Truncated || rc.OutputID == "" {
		t.Fatalf("not truncated: %+v", rc.TotalBytes)
	}
	preview := text(res, 0)

	for _, want := range []string{
		`query_tool_output {"id":"` + rc.OutputID + `"`,
		"  .items: array of 3000, at 9,",
		"    .items[0]: object of 3 keys, at 10,",
		"    .items[2999]: object of 3 keys, at ",
		"  .summary: object of 2 keys, at ",
	} {
		if !strings.Contains(preview, want) {
			t.Errorf("preview footer lacks %q", want)
		}
	}
	// The outline's offset of .summary reads its value.
	var at int64
	if i := strings.Index(preview, "  .summary: object of 2 keys, at "); i >= 0 {
		fmt.Sscanf(preview[i+len("  .summary: object of 2 keys, at "):], "%d", &at)
	}
	var page scrollback.Page
	decode(t, call(t, cs, "read_tool_output", map[string]any{"id": rc.OutputID, "offset": at, "limit": 28}), &page)
	if page.Text != `{"count":3000,"failed":0}}`+"\n" {
		t.Errorf("at the outline's offset %d: %q", at, page.Text)
	}

	var q scrollback.QueryResult
	res = call(t, cs, "query_tool_output", map[string]any{"id": rc.OutputID, "filter": ".items | length"})
	decode(t, res, &q)
	if q.Text != "3000\n" || q.HasMore || !q.Complete || q.TotalBytes != 5 || q.NextOffset != 5 {
		t.Errorf("length: %+v", q)
	}
	if text(res, 0) != "3000\n" || !strings.Contains(text(res, 1), "end of the results") {
		t.Errorf("text blocks %q %q", text(res, 0), text(res, 1))
	}
	if res.Meta[MetaSession] == nil {
		t.Errorf("no session in _meta")
	}

	// Paging the results: following nextOffset gives them all once.
	var all strings.Builder
	off := int64(0)
	for calls := 0; ; calls++ {
		res = call(t, cs, "query_tool_output", map[string]any{"id": rc.OutputID, "filter": ".items[].name", "offset": off})
		decode(t, res, &q)
		all.WriteString(q.Text)
		if !q.HasMore {
			break
		}
		if !strings.Contains(text(res, 1), fmt.Sprintf(`"offset":%d`, q.NextOffset)) || len(q.Text) > 4096 || calls > 100 {
			t.Fatalf("page at %d: %q", off, text(res, 1))
		}
		off = q.NextOffset
	}
	lines := strings.Split(strings.TrimSuffix(all.String(), "\n"), "\n")
	if len(lines) != 3000 || lines[0] != `"item-1"` || lines[2999] != `"item-3000"` || int64(all.Len()) != q.TotalBytes {
		t.Errorf("paged %d results, %d bytes of %d", len(lines), all.Len(), q.TotalBytes)
	}

	// Code Mode calls it too.
	var code scrollback.RunCodeResult
	decode(t, call(t, cs, "run_code", map[string]any{"code": fmt.Sprintf(`return tools.query_tool_output({id: %q, filter: ".summary.count"}).text`, rc.OutputID)}), &code)
	if code.Error != nil || code.Preview != "3000\n" {
		t.Errorf("run_code: %+v", code)
	}

	var plain scrollback.RunCommandResult
	res = call(t, cs, "run_command", map[string]any{"command": "seq 100000 | sed 's/^/line /'"})
	decode(t, res, &plain)
	if strings.Contains(text(res, 0), "query_tool_output") {
		t.Errorf("a preview of text that is not JSON mentions query_tool_output")
	}

	for _, tc := range []struct {
		name string
		args map[string]any
		kind string
		want []string
	}{
		{"bad filter", map[string]any{"id": rc.OutputID, "filter": ".items[ | length"}, "argument", []string{"query_tool_output", "not valid jq", "line 1, column"}},
		{"env", map[string]any{"id": rc.OutputID, "filter": "$ENV"}, "argument", []string{"$ENV", "not available"}},
		{"runtime error", map[string]any{"id": rc.OutputID, "filter": ".items.x"}, "argument", []string{"expected an object but got: array"}},
		{"not JSON", map[string]any{"id": plain.OutputID, "filter": "."}, "argument", []string{"not valid JSON", "byte 0 (line 1)", `"line 1\nline 2`}},
		{"unknown id", map[string]any{"id": "out_aaaaaaaaaaaaaaaaaaaaaaaaaa", "filter": "."}, "not_found", []string{"no retained output with that id in this session"}},
		{"missing filter", map[string]any{"id": rc.OutputID}, "argument", []string{"filter"}},
		{"limit", map[string]any{"id": rc.OutputID, "filter": ".", "limit": 0}, "argument", []string{"limit 0 is out of range"}},
		{"offset", map[string]any{"id": rc.OutputID, "filter": ".summary", "offset": 1000}, "offset", []string{"past the end of the results"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, cs, "query_tool_output", tc.args)
			if !res.IsError {
				t.Fatalf("no tool error: %q", text(res, 0))
			}
			if res.Meta[MetaErrorKind] != tc.kind {
				t.Errorf("error kind %v, want %s", res.Meta[MetaErrorKind], tc.kind)
			}
			for _, w := range tc.want {
				if !strings.Contains(text(res, 0), w) {
					t.Errorf("error %q lacks %q", text(res, 0), w)
				}
			}
		})
	}
}
