package mcpserver

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
)

// TestReadToolSchemas: the hand-registered read_tool_output shows the
// schemas the SDK infers for a typed tool, so that tools/list is what it
// would be with a typed handler.
func TestReadToolSchemas(t *testing.T) {
	typed := mcp.NewServer(&mcp.Implementation{Name: "typed"}, nil)
	mcp.AddTool(typed, &mcp.Tool{Name: "read_tool_output"}, func(context.Context, *mcp.CallToolRequest, scrollback.ReadInput) (*mcp.CallToolResult, scrollback.Page, error) {
		return nil, scrollback.Page{}, nil
	})
	res, err := connect(t, typed).ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) != 1 {
		t.Fatalf("listing the typed tool: %v %v", err, res)
	}
	want := res.Tools[0]
	raw := func(v any) string { // canonical JSON: object keys sorted
		b, _ := json.Marshal(v)
		var m any
		json.Unmarshal(b, &m)
		b, _ = json.Marshal(m)
		return string(b)
	}
	if got := raw(readTool().InputSchema); got != raw(want.InputSchema) {
		t.Errorf("input schema\n got %s\nwant %s", got, raw(want.InputSchema))
	}
	if got := raw(readTool().OutputSchema); got != raw(want.OutputSchema) {
		t.Errorf("output schema\n got %s\nwant %s", got, raw(want.OutputSchema))
	}
}

// TestReadArgs: plainly valid arguments decode on the fast path; all
// others are validated against the schema, with the SDK's messages.
func TestReadArgs(t *testing.T) {
	tests := []struct {
		args    string
		want    scrollback.ReadInput
		wantErr string // "" = no error
	}{
		{`{"id":"out_a"}`, scrollback.ReadInput{ID: "out_a"}, ""},
		{`{"id":"out_a","offset":4096,"limit":10}`, scrollback.ReadInput{ID: "out_a", Offset: 4096, Limit: ptr(10)}, ""},
		{`{"offset":-3,"id":"o\u00e9"}`, scrollback.ReadInput{ID: "oé", Offset: -3}, ""},
		{`{"id":"out_a","limit":null}`, scrollback.ReadInput{ID: "out_a"}, ""},
		{" {\n\t\"limit\" : 7 ,\"id\":\"out_a\", \"offset\":-0 } ", scrollback.ReadInput{ID: "out_a", Limit: ptr(7)}, ""},
		{`{"id":"out_a","id":"out_b"}`, scrollback.ReadInput{ID: "out_b"}, ""},
		{`{"id":"out_a","offset":1e3}`, scrollback.ReadInput{ID: "out_a", Offset: 1000}, ""},
		{`{}`, scrollback.ReadInput{}, `validating "arguments": validating root: required: missing properties: ["id"]`},
		{``, scrollback.ReadInput{}, `missing properties: ["id"]`},
		{`{"offset":3}`, scrollback.ReadInput{}, `missing properties: ["id"]`},
		{`{"id":7}`, scrollback.ReadInput{}, `validating "arguments"`},
		{`{"ID":"out_a"}`, scrollback.ReadInput{}, `validating "arguments"`},
		{`{"id":"out_a","path":"/etc/passwd"}`, scrollback.ReadInput{}, `validating "arguments"`},
		{`{"id":"out_a","offset":1.5}`, scrollback.ReadInput{}, `validating "arguments"`},
		{`{"id":"out_a","offset":"3"}`, scrollback.ReadInput{}, `validating "arguments"`},
		{`{"id":null}`, scrollback.ReadInput{}, `validating "arguments"`},
		{`["out_a"]`, scrollback.ReadInput{}, `validating "arguments"`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			got, err := readArgs(json.RawMessage(tt.args))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// FuzzReadArgs checks the fast path against the schema's: for any
// arguments, readArgs accepts exactly what slowArgs (the SDK's way)
// accepts, and decodes them to the same input. The fast path may never
// let through what the schema refuses.
func FuzzReadArgs(f *testing.F) {
	for _, s := range []string{`{"id":"x"}`, `{"id":"x","offset":12,"limit":4096}`, `{"id":"x","limit":null}`,
		`{"id":"x","offset":-0}`, `{"id":"x","offset":99999999999999999999}`, `{"id":"\ud800"}`, `{"id":"x","id":"y"}`,
		`{"ID":"x"}`, `{"id":"x","offset":1.0}`, `null`, `[]`, `{}`, `{"id":"x","limit":-1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		if !json.Valid([]byte(args)) {
			return // the SDK hands a tool only arguments that are JSON
		}
		fast, ferr := readArgs(json.RawMessage(args))
		slow, serr := slowArgs(json.RawMessage(args))
		if (ferr == nil) != (serr == nil) {
			t.Fatalf("%s: fast path error %v, schema error %v", args, ferr, serr)
		}
		if ferr == nil && !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%s: fast path %+v, schema %+v", args, fast, slow)
		}
	})
}

// TestPageTextMore: the line ending a page that has more after it names the
// bytes and the call to make next, with the id quoted as JSON whatever it
// holds.
func TestPageTextMore(t *testing.T) {
	for _, tt := range []struct {
		id           string
		off, next, n int64
		want         string
	}{
		{"out_abcdefghijklmnopqrstuvwxyz", 0, 4096, 8 << 20,
			`[scrollback: bytes 0 to 4096 of 8388608. More follows: read_tool_output {"id":"out_abcdefghijklmnopqrstuvwxyz","offset":4096}]`},
		{"out_X9_", 123, 130, 1 << 40,
			`[scrollback: bytes 123 to 130 of 1099511627776. More follows: read_tool_output {"id":"out_X9_","offset":130}]`},
		{`a"b\c<d>&é` + "\n", 5, 6, 7,
			`[scrollback: bytes 5 to 6 of 7. More follows: read_tool_output {"id":"a\"b\\c<d>&é\n","offset":6}]`},
		{"", 0, 1, 2,
			`[scrollback: bytes 0 to 1 of 2. More follows: read_tool_output {"id":"","offset":1}]`},
	} {
		got := pageText(scrollback.ReadInput{ID: tt.id, Offset: tt.off}, scrollback.Page{Text: "x", NextOffset: tt.next, TotalBytes: tt.n, HasMore: true})
		if len(got) != 2 || got[0] != "x" || got[1] != tt.want {
			t.Errorf("pageText(%q):\n got %q\nwant %q", tt.id, got, tt.want)
		}
	}
}
