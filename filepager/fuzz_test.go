package filepager

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// FuzzPages pages through random content from offset 0, following
// NextByteOffset, with random page budgets, line limits and checkpoint
// spacings. Invariants, with data the file's raw bytes and [o, n) a page's
// offsets:
//
//   - progress: n > o while HasMore; the last page ends at len(data);
//   - the pages' raw ranges are contiguous from 0, so they concatenate to
//     the file byte for byte;
//   - Text == utf8x.ValidString(data[o:n]): the raw bytes, each invalid
//     byte shown as U+FFFD, and len(Text) <= budget;
//   - neither o nor n falls inside a character;
//   - StartLine, EndLine and NextLine are 1 + the newlines before o, before
//     the page's last byte and before n; the page holds at most limit lines;
//   - HasMore == (n < len(data));
//   - reading line L (for every line of the file) starts at its first byte.
//
// A file with a NUL byte in its first 8 KiB is refused as binary instead.
func FuzzPages(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), uint8(4), uint8(0), uint8(0))
	f.Add([]byte("a€b𝄞c\xffd\xe2\x82\n\n"), uint8(5), uint8(1), uint8(3))
	f.Add([]byte("ééééé\nx"), uint8(0), uint8(2), uint8(1))
	f.Add(bytes.Repeat([]byte("ab\n"), 100), uint8(17), uint8(5), uint8(9))
	f.Add([]byte("\xf0\x9d\x84"), uint8(4), uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, budget, limit, spacing uint8) {
		// Small files and checkpoints every few bytes: many checkpoints
		// per file, and a fuzz run that stays fast (a page costs a copy of
		// the index, which has size/step entries).
		if len(data) > 4096 {
			data = data[:4096]
		}

		path := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		pageBytes := int(budget)%64 + 4
		p := newWithStep(Options{PageBytes: pageBytes}, int64(spacing)%32+1)
		ctx := context.Background()
		if bytes.IndexByte(data[:min(len(data), sniffBytes)], 0) >= 0 {
			if _, err := p.Read(ctx, Request{Path: path}); !errors.Is(err, ErrBinary) {
				t.Fatalf("binary file: err = %v", err)
			}
			return
		}
		lineOf := func(o int) int64 { return 1 + int64(bytes.Count(data[:o], nl)) }
		boundary := func(o int) bool {
			lo := max(o-3, 0)
			inside, _, _ := utf8x.Inside(data[lo:min(o+3, len(data))], o-lo)
			return !inside
		}

		o := 0
		for pages := 0; ; pages++ {
			pg, err := p.Read(ctx, Request{Path: path, ByteOffset: off(int64(o)), Limit: int64(limit)})
			if err != nil {
				t.Fatalf("page at %d: %v", o, err)
			}
			n := int(pg.NextByteOffset)
			if n < o || n > len(data) {
				t.Fatalf("page at %d: next offset %d", o, n)
			}
			if pg.Text != utf8x.ValidString(data[o:n]) || len(pg.Text) > pageBytes || !utf8.ValidString(pg.Text) {
				t.Fatalf("page [%d,%d): text %q for raw %q (budget %d)", o, n, pg.Text, data[o:n], pageBytes)
			}
			if !boundary(n) {
				t.Fatalf("page [%d,%d) ends inside a character", o, n)
			}
			wantEnd := lineOf(o)
			if n > o {
				wantEnd = lineOf(n - 1)
			}
			if pg.StartLine != lineOf(o) || pg.EndLine != wantEnd || pg.NextLine != lineOf(n) {
				t.Fatalf("page [%d,%d): lines %d %d %d, want %d %d %d", o, n, pg.StartLine, pg.EndLine, pg.NextLine, lineOf(o), wantEnd, lineOf(n))
			}
			lines := bytes.Count(data[o:n], nl)
			if n > o && data[n-1] != '\n' {
				lines++
			}
			if want := int(limit); want == 0 && lines > DefaultMaxLines || want > 0 && lines > want {
				t.Fatalf("page [%d,%d) has %d lines, limit %d", o, n, lines, limit)
			}
			if pg.HasMore != (n < len(data)) || pg.TotalBytes != int64(len(data)) {
				t.Fatalf("page [%d,%d): hasMore %v totalBytes %d", o, n, pg.HasMore, pg.TotalBytes)
			}
			if !pg.HasMore {
				break
			}
			if n == o {
				t.Fatalf("no progress at %d", o)
			}
			o = n
		}

		// Every line starts where it should; the line after the last is an error.
		start := 0
		for line := int64(1); start < len(data) || line == 1; line++ {
			pg, err := p.Read(ctx, Request{Path: path, Line: line, Limit: 1})
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			if int(pg.NextByteOffset) < start || pg.StartLine != line || !bytes.HasPrefix(data[start:], []byte(nil)) {
				t.Fatalf("line %d: %+v", line, pg)
			}
			if pg.Text != utf8x.ValidString(data[start:pg.NextByteOffset]) {
				t.Fatalf("line %d starts at the wrong byte: %q", line, pg.Text)
			}
			i := bytes.IndexByte(data[start:], '\n')
			if i < 0 {
				start = len(data)
			} else {
				start += i + 1
			}
		}
		lines := int64(bytes.Count(data, nl))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		if _, err := p.Read(ctx, Request{Path: path, Line: max(lines, 1) + 1}); !errors.Is(err, ErrLine) {
			t.Fatalf("line %d of %d: err = %v", lines+1, lines, err)
		}
	})
}

// FuzzShortPath checks that a long path in an error keeps its start and end
// cut at character boundaries: from valid UTF-8, the result is valid UTF-8.
func FuzzShortPath(f *testing.F) {
	f.Add(strings.Repeat("é", 200))
	f.Add(strings.Repeat("a", 127) + "🙂" + strings.Repeat("b", 200))
	f.Fuzz(func(t *testing.T, p string) {
		if !utf8.ValidString(p) {
			return
		}
		if got := shortPath(p); !utf8.ValidString(got) || len(got) > maxPathInError+40 {
			t.Fatalf("shortPath(%q) = %q", p, got)
		}
	})
}
