package grep

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback/grep/greptest"
)

// ref is what the reference (greptest) says Search should return: every
// match, with k lines of context, each line shown with textBytes.
func ref(data []byte, re *regexp.Regexp, k, textBytes int) []greptest.Match {
	return greptest.Matches(data, re, k, textBytes)
}

// asRef converts Search's matches to the reference's type.
func asRef(ms []Match) []greptest.Match {
	shown := func(ls []Line) []greptest.Shown {
		var out []greptest.Shown
		for _, l := range ls {
			out = append(out, greptest.Shown(l))
		}
		return out
	}
	out := []greptest.Match{}
	for _, m := range ms {
		out = append(out, greptest.Match{Shown: greptest.Shown(m.Line), Before: shown(m.Before), After: shown(m.After)})
	}
	return out
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

func TestSearchMatchesReference(t *testing.T) {
	data := []byte("alpha\nbeta error\r\n\nerror: gamma\nδέλτα error\n\xff\xfe error \xe2\x82\n" +
		strings.Repeat("x", 40) + " error in a long line\nlast error\n" +
		strings.Repeat("é", 30) + "error" + strings.Repeat("日", 20) + "\r\n" + strings.Repeat("y", 100) + "error\r")
	patterns := []string{"error", "(?i)ERROR", "^error", "error$", "err.r", "", "δ", `\x{FFFD}`, "nothing", `\berror\b`, "(?i)Δ", "ror: g",
		"^error$", "^last error$", `^x+ error`, `error\r$`, `\Aalpha\z`, `日$`, `(?i)^Y+ERROR`}
	for _, p := range patterns {
		re := regexp.MustCompile(p)
		for _, k := range []int{0, 1, 3} {
			for _, mx := range []int{0, 1, 2} {
				// Lines over 30 bytes are streamed, over 12 shown as windows.
				opts := Options{Context: k, Max: mx, lineMemory: 30, TextBytes: 12, chunk: 7}
				got := asRef(walk(t, data, re, opts))
				want := ref(data, re, k, 12)
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
	for _, mem := range []int{0, 51} { // held in memory; streamed
		opts := Options{lineMemory: mem, TextBytes: 9, chunk: 16}
		res, err := Search(strings.NewReader(data), int64(len(data)), regexp.MustCompile("MARK"), opts)
		if err != nil {
			t.Fatal(err)
		}
		// The match past the first 51 bytes of line 2 is found; its text is
		// a window of at most 9 bytes around it, on character boundaries,
		// and its offset is where the window starts.
		want := []Line{{2, 198, "ééMARK", true}, {3, 207, "b MARK", false}}
		var got []Line
		for _, m := range res.Matches {
			got = append(got, m.Line)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("lineMemory %d: got %+v\nwant %+v", mem, got, want)
		}
		if len(got) == 0 || data[got[0].Offset:got[0].Offset+8] != "ééMARK" {
			t.Errorf("lineMemory %d: offset %d does not show the window", mem, got[0].Offset)
		}
		// Its context shows the line's head, from the line's start.
		opts.Context = 1
		res, err = Search(strings.NewReader(data), int64(len(data)), regexp.MustCompile("^b"), opts)
		if err != nil || len(res.Matches) != 1 {
			t.Fatalf("lineMemory %d: %+v, %v", mem, res, err)
		}
		m := res.Matches[0]
		if want := []Line{{2, 2, "éééé", true}}; !reflect.DeepEqual(m.Before, want) {
			t.Errorf("lineMemory %d: before %+v, want %+v", mem, m.Before, want)
		}
		if want := []Line{{4, 214, "éééé", true}}; !reflect.DeepEqual(m.After, want) {
			t.Errorf("lineMemory %d: after %+v, want %+v", mem, m.After, want)
		}
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
	if want := ref([]byte(data), re, 1, DefaultTextBytes); !reflect.DeepEqual(asRef(got), want) {
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

// CrossesLines refuses exactly the patterns every match of which holds a
// newline.
func TestCrossesLines(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    bool
	}{
		{`a\nb`, true},
		{`\n`, true},
		{"a\nb", true}, // a newline as written
		{`[\n]`, true},
		{`(?i)A\nB`, true},
		{`x(\n|\n\n)y`, true},
		{`\}\s*\n\s*\{`, true},
		{`"id":\s*1,\n`, true},
		{`(\n)+`, true},
		{`\n{2}`, true},
		{`(?m)^a$\n^b$`, true},
		{`a|\n`, false},
		{`\s`, false},
		{`[^a]`, false},
		{`(?s).`, false},
		{`a\n?b`, false},
		{`\n*`, false},
		{`\n{0,3}`, false},
		{`[\n\r]`, false},
		{`(?m)^$`, false},
		{`\\n`, false}, // a backslash and an n
		{``, false},
	} {
		if got := CrossesLines(regexp.MustCompile(c.pattern)); got != c.want {
			t.Errorf("CrossesLines(%q) = %v, want %v", c.pattern, got, c.want)
		}
	}
}

// FuzzSearch checks Search against the reference (greptest), for random
// copies, patterns from greptest's grammar (or, after '=', as written),
// read sizes of 1 to 32 bytes (so chunk boundaries fall everywhere), lines
// streamed past 1 to 48 bytes and shown in 1 to 8:
//   - walking from 0 with NextOffset (whatever Max and Budget) returns
//     every match exactly once, each with its context, as the reference
//     does: the lines regexp.Match matches, windows and heads included;
//   - no result holds more than Max matches, HasMore is false only at the
//     end (NextOffset == size), and NextOffset always moves forward;
//   - every Text is valid UTF-8 (it is compared against the reference, which
//     replaces each invalid byte with U+FFFD);
//   - Count, from 0 and from a line's start, equals the reference's count;
//   - a pattern CrossesLines refuses matches no line.
func FuzzSearch(f *testing.F) {
	seq := []byte("1\n5\n10\n4999\n5000\n5001\n15000\n50000\n50001\n55000\n100000\n")
	for _, p := range []string{`=^5000$`, `=^1$`, `=^(5000)$`, `=^5000\b`, `=5000`, `=(?i)^A$`} {
		f.Add(seq, []byte(p), uint8(0), uint8(0), uint8(0), uint8(0))
	}
	f.Add([]byte("a\nab\r\nb\n"), []byte("=b$"), uint8(1), uint8(1), uint8(3), uint8(8))
	f.Add([]byte("xxxx aaaa bbbb\nk\u212A\n\xffé\n"), []byte("=(?i)k"), uint8(2), uint8(0), uint8(5), uint8(2))
	f.Add([]byte(strings.Repeat(`{"id":1,"t":"é"},`, 20)+"NEEDLE-777\n"), []byte("=NEEDLE-777"), uint8(1), uint8(1), uint8(7), uint8(20))
	f.Add([]byte(strings.Repeat("ab", 40)+"\r\n"+strings.Repeat("日", 30)), []byte{3, 0, 7, 1, 2, 5, 2, 9}, uint8(1), uint8(2), uint8(9), uint8(5))
	for _, p := range []string{`=a\nb`, `=5000|\n`, `=[\n]1`, `=\s*\n`, `=1\n?5`, `=(?i)A\nB`, `=(?:\n){0,2}5`} {
		f.Add(seq, []byte(p), uint8(1), uint8(0), uint8(0), uint8(0))
	}
	f.Fuzz(func(t *testing.T, data, pb []byte, k, mx, chunk, lm uint8) {
		re, ok := greptest.PatternOf(pb)
		if !ok {
			t.Skip()
		}
		if CrossesLines(re) {
			if want := ref(data, re, 0, 1); len(want) > 0 {
				t.Fatalf("CrossesLines(%q), yet %d lines match: %+v", re, len(want), want)
			}
		}
		opts := Options{Context: int(k % 4), Max: int(mx % 4), Budget: int(chunk/32) * 8, chunk: int64(chunk%32) + 1,
			TextBytes: int(lm>>5) + 1, lineMemory: int(lm%48) + 1}
		got := asRef(walk(t, data, re, opts))
		want := ref(data, re, opts.Context, opts.TextBytes)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pattern %q opts %+v:\n got %+v\nwant %+v", re, opts, got, want)
		}
		ls := greptest.Lines(data)
		for _, from := range []int64{0, -1} {
			if from < 0 {
				if len(ls) == 0 {
					continue
				}
				from = ls[int(k)%len(ls)].Start
			}
			opts := opts
			opts.Offset, opts.Count = from, true
			res, err := Search(bytes.NewReader(data), int64(len(data)), re, opts)
			if err != nil {
				t.Fatal(err)
			}
			if want := greptest.Count(data, re, from); res.Count != want || len(res.Matches) != 0 || res.HasMore {
				t.Fatalf("pattern %q count from %d: %d (%d matches, hasMore %v), want %d", re, from, res.Count, len(res.Matches), res.HasMore, want)
			}
		}
	})
}

func BenchmarkSearch8MiB(b *testing.B) {
	data := benchCopy()
	for _, c := range []struct {
		pattern string
		want    int
	}{
		{"MARKER-LAST", 1}, {"(?i)marker-last", 1}, {`MARKER-\w+`, 1}, {`\d+Z ERROR`, 1}, {`(?i)\w+-last`, 1},
		{`[M]ARKER-LAST|NOTHING`, 1}, {`^\S+ ERROR`, 1},
		// A literal on every line: the regexp runs on each.
		{`processed request id=[0-9a-f]+ status=[45]`, 0},
	} {
		re := regexp.MustCompile(c.pattern)
		b.Run(c.pattern, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				res, err := Search(bytes.NewReader(data), int64(len(data)), re, Options{Max: 50})
				if err != nil || len(res.Matches) != c.want {
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

// BenchmarkSearchLongLine searches a 5 MiB one-line JSON document for a
// needle at its end: a literal (found by the prefilter, case-sensitive or
// not), a pattern that starts with a literal (the regexp streams from its
// first occurrence), one whose literals occur all along the line (the
// regexp streams over all of it), with and without a prefix.
func BenchmarkSearchLongLine(b *testing.B) {
	data := longJSON(5<<20, "NEEDLE-777")
	for _, p := range []string{"NEEDLE-777", `NEEDLE-\d+`, `(?i)needle-777`, `"ok":true\},"NEEDLE`, `\d+ é","ok":true\},"NEEDLE`} {
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

// longJSON is one line of JSON records of about n bytes, ending in needle.
func longJSON(n int, needle string) []byte {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for id := 1; buf.Len() < n; id++ {
		fmt.Fprintf(&buf, `{"id":%d,"title":"issue %d é","ok":true},`, id, id)
	}
	buf.WriteString(`"` + needle + `"]` + "\n")
	return buf.Bytes()
}

// TestPrefilter shows what the prefilter derives from some patterns; that
// what it derives never changes an answer is FuzzSearch's to show.
func TestPrefilter(t *testing.T) {
	tests := []struct {
		pattern string
		needles []string
		exact   bool
		fold    bool
		prefix  string
	}{
		{"5000", []string{"5000"}, true, false, ""},
		{"^5000$", []string{"5000"}, false, false, ""}, // anchored: not one literal
		{"^1$", []string{"1"}, false, false, ""},
		{`^5000\b`, []string{"5000"}, false, false, ""},
		{"(?i)error", []string{"error"}, true, true, ""},
		{"(?i)key", []string{"ey"}, false, true, ""}, // k also matches U+212A
		{"(?i)ß", nil, false, false, ""},
		{`NEEDLE-\d+`, []string{"NEEDLE-"}, false, false, "NEEDLE-"},
		{`FAIL|panic:`, []string{"FAIL", "panic:"}, false, false, ""},
		{`(?i)fail|panic:`, []string{"fail", "panic:"}, false, true, ""},
		{`x|y*`, nil, false, false, ""},
		{`a\x{FFFD}bc`, []string{"bc"}, false, false, "a"},
		{`\x{D800}`, nil, false, false, ""},
		{`(ab)+c{2,}d?`, []string{"ab"}, false, false, "ab"},
		{`(ab)+xyz`, []string{"xyz"}, false, false, "ab"},
		{`\bword`, []string{"word"}, false, false, ""}, // an assertion before it: no prefix
	}
	for _, tt := range tests {
		pf := newPrefilter(regexp.MustCompile(tt.pattern))
		var needles []string
		for _, n := range pf.needles {
			needles = append(needles, string(n))
		}
		if !reflect.DeepEqual(needles, tt.needles) || pf.exact != tt.exact || pf.fold != tt.fold || string(pf.prefix) != tt.prefix {
			t.Errorf("%q: needles %q exact %v fold %v prefix %q; want %q %v %v %q", tt.pattern, needles, pf.exact, pf.fold, pf.prefix, tt.needles, tt.exact, tt.fold, tt.prefix)
		}
	}
}

// TestSearchLongLineMemory: what a search of one long line allocates does
// not grow with the line (4 MiB, then 8 MiB), and is less than the line:
// it is streamed, not held.
func TestSearchLongLineMemory(t *testing.T) {
	re := regexp.MustCompile(`\d+ é","ok":true\},"NEEDLE-\d+`)
	var alloc [2]uint64
	for i, n := range []int{4 << 20, 8 << 20} {
		data := longJSON(n, "NEEDLE-777")
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err := Search(bytes.NewReader(data), int64(len(data)), re, Options{})
		runtime.ReadMemStats(&after)
		if err != nil || len(res.Matches) != 1 || !strings.Contains(res.Matches[0].Text, "NEEDLE-777") {
			t.Fatalf("%+v, %v", res, err)
		}
		alloc[i] = after.TotalAlloc - before.TotalAlloc
	}
	if alloc[0] > 4<<20 || alloc[1] > alloc[0]+1<<20 {
		t.Errorf("searching a 4 MiB line allocated %d bytes, an 8 MiB line %d", alloc[0], alloc[1])
	}
}
