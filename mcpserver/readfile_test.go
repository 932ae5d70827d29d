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
