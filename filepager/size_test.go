package filepager

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// A file that shrinks while it is read is an error saying so, never a page
// that looks whole.
func TestShrinkWhileRead(t *testing.T) {
	for _, tt := range []struct {
		name      string
		size, cut int
		line      int64
	}{
		{"under the sniff", 100, 50, 0},
		{"in the page", 20 << 10, 10 << 10, 0},
		{"to nothing", 100, 0, 0},
		{"in the scan for a line", 200 << 10, 100 << 10, 19000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, t.TempDir(), "f.txt", bytes.Repeat([]byte("abcdefghi\n"), tt.size/10))
			p := New(Options{})
			p.opened = func(resolved string) {
				if err := os.Truncate(resolved, int64(tt.cut)); err != nil {
					t.Error(err)
				}
			}
			pg, err := p.Read(context.Background(), Request{Path: path, Line: tt.line})
			if !errors.Is(err, ErrSize) || !strings.Contains(err.Error(), "fewer when read") {
				t.Fatalf("got %d bytes (hasMore %v), err = %v; want ErrSize", len(pg.Text), pg.HasMore, err)
			}
		})
	}
}
