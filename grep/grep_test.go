package grep

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// naiveLine is a line of the copy as the reference sees it.
type naiveLine struct {
	num     int64
	off     int64
	content []byte // without "\n" and a "\r" before it
}

// naiveLines splits data into lines the simplest way: the whole copy in
// memory, strings.Split style.
func naiveLines(data []byte) []naiveLine {
	var ls []naiveLine
	if len(data) == 0 {
		return nil
	}
	parts := bytes.Split(data, []byte("\n"))
	if data[len(data)-1] == '\n' {
		parts = parts[:len(parts)-1]
	}
	off := int64(0)
	for i, p := range parts {
		c := p
		terminated := off+int64(len(p)) < int64(len(data))
		if terminated && len(c) > 0 && c[len(c)-1] == '\r' {
			c = c[:len(c)-1]
		}
		ls = append(ls, naiveLine{num: int64(i + 1), off: off, content: c})
		off += int64(len(p)) + 1
	}
	return ls
}

// naiveCut returns the longest prefix of b of at most limit bytes that
// ends on a character boundary, decoding from the start: a valid sequence
// is one character, any other byte a character of its own.
func naiveCut(b []byte, limit int) ([]byte, bool) {
	if len(b) <= limit {
		return b, false
	}
	n := 0
	for n < len(b) {
		_, size := utf8.DecodeRune(b[n:])
		if n+size > limit {
			break
		}
		n += size
	}
	return b[:n], true
}

// naiveShow is what a result shows of a line.
func naiveShow(l naiveLine, maxLine, textBytes int) Line {
	c, long := naiveCut(l.content, maxLine)
	t, cut := naiveCut(c, textBytes)
	return Line{Number: l.num, Offset: l.off, Text: validEach(t), Truncated: long || cut}
}

// validEach replaces every byte that is not part of a valid sequence with
// U+FFFD.
func validEach(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		sb.WriteRune(r) // RuneError for an invalid byte
		b = b[size:]
	}
	return sb.String()
}

// naive returns every match of re in data with k lines of context.
func naive(data []byte, re *regexp.Regexp, k, maxLine, textBytes int) []Match {
	ls := naiveLines(data)
	ms := []Match{}
	for i, l := range ls {
		c, _ := naiveCut(l.content, maxLine)
		if !re.Match(c) {
			continue
		}
		m := Match{Line: naiveShow(l, maxLine, textBytes)}
		for j := max(0, i-k); j < i; j++ {
			m.Before = append(m.Before, naiveShow(ls[j], maxLine, textBytes))
		}
		for j := i + 1; j < len(ls) && j <= i+k; j++ {
			m.After = append(m.After, naiveShow(ls[j], maxLine, textBytes))
		}
		ms = append(ms, m)
	}
	return ms
}

// walk searches data from 0, following NextOffset, and returns every
// match; it fails t when a walk step breaks an invariant.
func walk(t testing.TB, data []byte, re *regexp.Regexp, opts Options) []Match {
	t.Helper()
	all := []Match{}
	opts.Offset = 0
	for step := 0; ; step++ {
		if step > len(data)+2 {
			t.Fatalf("walk does not end")
		}
		res, err := Search(bytes.NewReader(data), int64(len(data)), re, opts)
		if err != nil {
			t.Fatalf("Search(offset %d): %v", opts.Offset, err)
		}
		if res.Matches == nil {
			t.Fatalf("Matches is nil")
		}
		if opts.Max > 0 && len(res.Matches) > opts.Max {
			t.Fatalf("%d matches, max %d", len(res.Matches), opts.Max)
		}
		if res.HasMore && len(res.Matches) == 0 {
			t.Fatalf("hasMore with no match at offset %d", opts.Offset)
		}
		if !res.HasMore && res.NextOffset != int64(len(data)) {
			t.Fatalf("hasMore=false but nextOffset %d != size %d", res.NextOffset, len(data))
		}
		if res.HasMore && res.NextOffset <= opts.Offset {
			t.Fatalf("nextOffset %d does not move past %d", res.NextOffset, opts.Offset)
		}
		for _, m := range res.Matches {
			if m.Offset < opts.Offset || (res.HasMore && m.Offset >= res.NextOffset) {
				t.Fatalf("match at %d outside [%d, %d)", m.Offset, opts.Offset, res.NextOffset)
			}
		}
		all = append(all, res.Matches...)
		if !res.HasMore {
			return all
		}
		opts.Offset = res.NextOffset
	}
}

func TestSearchMatchesNaive(t *testing.T) {
	data := []byte("alpha\nbeta error\r\n\nerror: gamma\nδέλτα error\n\xff\xfe error \xe2\x82\n" +
		strings.Repeat("x", 40) + " error in a long line\nlast error")
	patterns := []string{"error", "(?i)ERROR", "^error", "error$", "err.r", "", "δ", `\x{FFFD}`, "nothing", `\berror\b`, "(?i)Δ", "ror: g"}
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		for _, k := range []int{0, 1, 3} {
			for _, mx := range []int{0, 1, 2} {
				opts := Options{Context: k, Max: mx, MaxLine: 30, TextBytes: 12, chunk: 7}
				got := walk(t, data, re, opts)
				want := naive(data, re, k, 30, 12)
				if !reflect.DeepEqual(got, want) {
					t.Errorf("pattern %q context %d max %d:\n got %+v\nwant %+v", p, k, mx, got, want)
				}
			}
		}
	}
}

func TestSearchLines(t *testing.T) {
	tests := []struct {
		name    string
		data    string
		pattern string
		want    []Line
	}{
		{"empty copy", "", "", nil},
		{"empty pattern matches every line", "a\n\nb", "", []Line{{1, 0, "a", false}, {2, 2, "", false}, {3, 3, "b", false}}},
		{"one newline is one empty line", "\n", "^$", []Line{{1, 0, "", false}}},
		{"crlf", "one\r\ntwo\r\n", "o$", []Line{{2, 5, "two", false}}},
		{"lone cr stays", "a\rb\n", "a\rb", []Line{{1, 0, "a\rb", false}}},
		{"final cr without newline stays", "x\r", `x\r$`, []Line{{1, 0, "x\r", false}}},
		{"invalid bytes shown as U+FFFD each", "ok \xff\xfe!\n", "ok", []Line{{1, 0, "ok \uFFFD\uFFFD!", false}}},
		{"newline in a literal never matches", "a\nb\n", "a\nb", nil},
		{"literal prefix", "foo1\nfoo\nbarfoo22\n", `foo\d+`, []Line{{1, 0, "foo1", false}, {3, 9, "barfoo22", false}}},
		{"fold literal", "Error\nERROR\nerr\neRrOr!\n", "(?i)error", []Line{{1, 0, "Error", false}, {2, 6, "ERROR", false}, {4, 16, "eRrOr!", false}}},
		{"fold with kelvin sign", "\u212Aey\nkey\n", "(?i)key", []Line{{1, 0, "\u212Aey", false}, {2, 6, "key", false}}},
		{"anchors are per line", "xa\nab\n", `\Aa`, []Line{{2, 3, "ab", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Search(strings.NewReader(tt.data), int64(len(tt.data)), regexp.MustCompile(tt.pattern), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []Line
			for _, m := range res.Matches {
				got = append(got, m.Line)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if res.HasMore || res.NextOffset != int64(len(tt.data)) {
				t.Errorf("hasMore %v nextOffset %d, want false %d", res.HasMore, res.NextOffset, len(tt.data))
			}
		})
	}
}

func TestSearchOffsetMidLine(t *testing.T) {
	data := "one\ntwo error\nthree error\nfour\n"
	re := regexp.MustCompile("error")
	// Offset 6 is inside line 2 ("two error"): the rest of it, "o error",
	// is searched as line 2 from offset 6, and is the before-context of
	// what follows.
	res, err := Search(strings.NewReader(data), int64(len(data)), re, Options{Offset: 6, Context: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []Match{
		{Line: Line{2, 6, "o error", false}, Before: []Line{{1, 0, "one", false}}, After: []Line{{3, 14, "three error", false}}},
		{Line: Line{3, 14, "three error", false}, Before: []Line{{2, 6, "o error", false}}, After: []Line{{4, 26, "four", false}}},
	}
	if !reflect.DeepEqual(res.Matches, want) {
		t.Errorf("got %+v\nwant %+v", res.Matches, want)
	}
	// Offset inside the last "error", of line 3, finds nothing.
	res, err = Search(strings.NewReader(data), int64(len(data)), re, Options{Offset: 21})
	if err != nil || len(res.Matches) != 0 || res.HasMore || res.NextOffset != int64(len(data)) {
		t.Errorf("from 20: %+v, %v", res, err)
	}
}

func TestSearchContextAtEdges(t *testing.T) {
	data := "first\nmid\nlast"
	res, err := Search(strings.NewReader(data), int64(len(data)), regexp.MustCompile("first|last"), Options{Context: 5})
	if err != nil {
		t.Fatal(err)
	}
	want := []Match{
		{Line: Line{1, 0, "first", false}, After: []Line{{2, 6, "mid", false}, {3, 10, "last", false}}},
		{Line: Line{3, 10, "last", false}, Before: []Line{{1, 0, "first", false}, {2, 6, "mid", false}}},
	}
	if !reflect.DeepEqual(res.Matches, want) {
		t.Errorf("got %+v\nwant %+v", res.Matches, want)
	}
}

func TestSearchLongLine(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	data := "a\n" + long + "MARK\nb MARK\n" + long + "\n"
	re := regexp.MustCompile("MARK|é")
	res, err := Search(strings.NewReader(data), int64(len(data)), re, Options{MaxLine: 51, TextBytes: 9, chunk: 16})
	if err != nil {
		t.Fatal(err)
	}
	// The pattern sees 50 bytes of each long line (51 would split a
	// character), so "é" matches it and MARK past the cut is not what
	// matched; Text shows 8 bytes.
	want := []Line{
		{2, 2, strings.Repeat("é", 4), true},
		{3, 207, "b MARK", false},
		{4, 214, strings.Repeat("é", 4), true},
	}
	var got []Line
	for _, m := range res.Matches {
		got = append(got, m.Line)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	res, err = Search(strings.NewReader(data), int64(len(data)), regexp.MustCompile("MARK"), Options{MaxLine: 51, chunk: 16})
	if err != nil || len(res.Matches) != 1 || res.Matches[0].Number != 3 {
		t.Errorf("MARK past MaxLine: got %+v, %v; want only line 3", res.Matches, err)
	}
}

func TestSearchChunkBoundary(t *testing.T) {
	// A line that straddles each chunk boundary, the needle split across it.
	for _, chunk := range []int64{3, 5, 8, 64} {
		data := strings.Repeat("abc\n", 5) + "xxNEEDLEyy\n" + strings.Repeat("abc\n", 5)
		for _, p := range []string{"NEEDLE", "(?i)needle", "N.EDLE", "EDLEy+$"} {
			res, err := Search(strings.NewReader(data), int64(len(data)), regexp.MustCompile(p), Options{chunk: chunk})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Matches) != 1 || res.Matches[0].Offset != 20 || res.Matches[0].Number != 6 {
				t.Errorf("chunk %d pattern %q: got %+v, want one match at line 6, offset 20", chunk, p, res.Matches)
			}
		}
	}
}

func TestSearchBudget(t *testing.T) {
	data := strings.Repeat("match 0123456789\n", 10)
	re := regexp.MustCompile("match")
	res, err := Search(strings.NewReader(data), int64(len(data)), re, Options{Budget: 40})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Matches) != 2 || !res.HasMore || res.NextOffset != 34 {
		t.Errorf("budget 40: %d matches, hasMore %v, nextOffset %d; want 2, true, 34", len(res.Matches), res.HasMore, res.NextOffset)
	}
	// The first match is returned even when it alone exceeds the budget.
	res, err = Search(strings.NewReader(data), int64(len(data)), re, Options{Budget: 1})
	if err != nil || len(res.Matches) != 1 || !res.HasMore {
		t.Errorf("budget 1: %+v, %v", res, err)
	}
	got := walk(t, []byte(data), re, Options{Budget: 40, Context: 1})
	if want := naive([]byte(data), re, 1, DefaultMaxLine, DefaultTextBytes); !reflect.DeepEqual(got, want) {
		t.Errorf("walk with budget: got %d matches, want %d", len(got), len(want))
	}
}

func TestSearchErrors(t *testing.T) {
	re := regexp.MustCompile("x")
	r := strings.NewReader("abc")
	for _, o := range []Options{{Offset: -1}, {Offset: 4}, {Context: -1}, {Context: MaxContext + 1}} {
		if _, err := Search(r, 3, re, o); !errors.Is(err, ErrOption) {
			t.Errorf("%+v: err %v, want ErrOption", o, err)
		}
	}
	if _, err := Search(r, 3, nil, Options{}); !errors.Is(err, ErrOption) {
		t.Errorf("nil pattern: err %v, want ErrOption", err)
	}
	// A copy shorter than its stated size is an error, not a panic.
	if _, err := Search(r, 10, re, Options{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("short copy: err %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := Search(failReader{}, 10, re, Options{Offset: 5}); err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Errorf("failing reader: err %v", err)
	}
}

type failReader struct{}

func (failReader) ReadAt(p []byte, off int64) (int, error) { return 0, errors.New("disk on fire") }

var fuzzPatterns = []string{`\d(?i:AB)+c`, `x(?i:kKé)y`, `(ab){2,}`, "a", "ab", "(?i)ab", "(?i)k", "a.*b", "^a", "b$", "", `\r`, "é", `a|\x{FFFD}`, `\Ab`, "[^a]+$", "(?i)é", "b\na"}

// FuzzSearch checks, for random copies, patterns, chunk sizes and limits:
//   - walking from 0 with NextOffset (whatever Max and Budget) returns every match exactly once, each
//     with its context, the same as a naive search of the whole copy held in
//     memory;
//   - no result holds more than Max matches, HasMore is false only at the
//     end (NextOffset == size), and NextOffset always moves forward;
//   - every Text is valid UTF-8 (it is compared against the reference, which
//     replaces each invalid byte with U+FFFD).
func FuzzSearch(f *testing.F) {
	f.Add([]byte("a\nab\r\nb\n"), uint8(1), uint8(1), uint8(1), uint8(3), uint8(8))
	f.Add([]byte("xxxx aaaa bbbb\nk\u212A\n\xffé\n"), uint8(4), uint8(2), uint8(0), uint8(5), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, pi, k, mx, chunk, maxLine uint8) {
		re := regexp.MustCompile(fuzzPatterns[int(pi)%len(fuzzPatterns)])
		opts := Options{Context: int(k % 4), Max: int(mx % 4), MaxLine: int(maxLine%40) + 1, Budget: int(chunk/32) * 8, chunk: int64(chunk%32) + 1}
		opts.TextBytes = min(opts.MaxLine, 6)
		got := walk(t, data, re, opts)
		want := naive(data, re, opts.Context, opts.MaxLine, opts.TextBytes)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pattern %q opts %+v:\n got %+v\nwant %+v", re, opts, got, want)
		}
	})
}

func BenchmarkSearch8MiB(b *testing.B) {
	data := benchCopy()
	for _, p := range []string{"MARKER-LAST", "(?i)marker-last", `MARKER-\w+`, `\d+Z ERROR`, `(?i)\w+-last`, `[M]ARKER-LAST|NOTHING`} {
		re := regexp.MustCompile(p)
		b.Run(p, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				res, err := Search(bytes.NewReader(data), int64(len(data)), re, Options{Max: 50})
				if err != nil || len(res.Matches) != 1 {
					b.Fatalf("%v, %d matches", err, len(res.Matches))
				}
			}
		})
	}
}

// benchCopy is 8 MiB of log-like lines with one marker in the last chunk.
func benchCopy() []byte {
	var buf bytes.Buffer
	for i := 0; buf.Len() < 8<<20-200; i++ {
		fmt.Fprintf(&buf, "2024-05-01T12:00:%02d.%06dZ INFO worker %d processed request id=%x status=200\n", i%60, i%1000000, i%17, i*7919)
	}
	buf.WriteString("2024-05-01T12:59:59Z ERROR MARKER-LAST the end\n")
	return buf.Bytes()
}
