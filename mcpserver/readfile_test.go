package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
)

// A page that ends inside a line longer than the page says that the line
// goes on, and where; one that ends at a line's end does not.
func TestReadFileLongLineFooter(t *testing.T) {
	root := t.TempDir()
	eng, _ := newEngine(t, filepager.Options{Root: root, PageBytes: 1000})
	sess, _ := eng.NewSession(context.Background(), scrollback.LocalOwner)
	cs := connect(t, NewServer(sess, Options{}))
	path := filepath.Join(root, "long.txt")
	if err := os.WriteFile(path, []byte(strings.Repeat("x", 2500)+"\nnext\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		offset int
		want   []string // in the footer
		not    string
	}{
		{0, []string{"line 1 goes on past byte 1000", `"byte_offset":1000`}, ""},
		{1000, []string{"line 1 goes on past byte 2000", `"byte_offset":2000`}, ""},
		{2000, []string{"end of the file"}, "goes on"},
	} {
		res := call(t, cs, "read_file", map[string]any{"path": path, "byte_offset": tt.offset})
		end := text(res, 1)
		for _, w := range tt.want {
			if !strings.Contains(end, w) {
				t.Errorf("offset %d: footer %q does not say %q", tt.offset, end, w)
			}
		}
		if tt.not != "" && strings.Contains(end, tt.not) {
			t.Errorf("offset %d: footer %q says %q", tt.offset, end, tt.not)
		}
	}
}

// With the defaults, a page of a line longer than the 24 KiB page shows a
// 4 KiB window of it, and the footer continues at the window's end; a file
// of ordinary lines still fills the page.
func TestReadFileLongLineWindow(t *testing.T) {
	root := t.TempDir()
	eng, _ := newEngine(t, filepager.Options{Root: root})
	sess, _ := eng.NewSession(context.Background(), scrollback.LocalOwner)
	cs := connect(t, NewServer(sess, Options{}))
	long := filepath.Join(root, "one-line.json")
	if err := os.WriteFile(long, []byte(`{"":"`+strings.Repeat("é", 60_000)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	lines := filepath.Join(root, "lines.txt")
	if err := os.WriteFile(lines, []byte(strings.Repeat(strings.Repeat("y", 99)+"\n", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		path     string
		offset   int
		wantNext int
		footer   string
	}{
		{long, 0, 4095, "line 1 goes on past byte 4095"}, // {"":" is 5 bytes, then é is 2 each: 4096 would split one
		{long, 4095, 4095 + 4096, `"byte_offset":8191`},
		{lines, 0, 24500, `"byte_offset":24500}`},
	} {
		res := call(t, cs, "read_file", map[string]any{"path": tt.path, "byte_offset": tt.offset})
		var out struct {
			Text           string `json:"text"`
			NextByteOffset int    `json:"nextByteOffset"`
		}
		decode(t, res, &out)
		if out.NextByteOffset != tt.wantNext || len(out.Text) != tt.wantNext-tt.offset {
			t.Errorf("%s at %d: nextByteOffset %d and %d bytes of text, want next %d", filepath.Base(tt.path), tt.offset, out.NextByteOffset, len(out.Text), tt.wantNext)
		}
		if end := text(res, 1); !strings.Contains(end, tt.footer) {
			t.Errorf("%s at %d: footer %q does not say %q", filepath.Base(tt.path), tt.offset, end, tt.footer)
		}
	}
}
