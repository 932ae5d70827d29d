package scrollback_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/grep"
	"github.com/scrollback-dev/scrollback/grep/greptest"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

func grepAll(t testing.TB, sess *scrollback.Session, in scrollback.GrepInput) []scrollback.GrepMatch {
	t.Helper()
	all := []scrollback.GrepMatch{}
	for calls := 0; ; calls++ {
		res, err := sess.GrepToolOutput(context.Background(), in)
		if err != nil {
			t.Fatalf("grep from %d: %v", in.Offset, err)
		}
		if res.Matches == nil || (in.Max > 0 && len(res.Matches) > in.Max) {
			t.Fatalf("matches %v with max %d", res.Matches, in.Max)
		}
		all = append(all, res.Matches...)
		if !res.HasMore {
			if res.NextOffset != res.TotalBytes {
				t.Fatalf("hasMore=false with nextOffset %d != totalBytes %d", res.NextOffset, res.TotalBytes)
			}
			return all
		}
		if res.NextOffset <= in.Offset || calls > 1<<20 {
			t.Fatalf("nextOffset %d does not move on from %d", res.NextOffset, in.Offset)
		}
		in.Offset = res.NextOffset
	}
}

// TestGrepMarkerInLastChunk: a marker in the last chunk of an 8 MiB copy is
// found, its offset reads its line, and a literal search takes well under
// the 50 ms target (checked loosely here; see the benchmark).
func TestGrepMarkerInLastChunk(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv(t)
	var buf bytes.Buffer
	line := 0
	for buf.Len() < scrollback.CopyCap-100 {
		line++
		fmt.Fprintf(&buf, "line %07d ok\n", line)
	}
	buf.WriteString("FATAL: the marker\n")
	id := env.save(t, env.sess, buf.Bytes())
	markerOff := int64(buf.Len() - len("FATAL: the marker\n"))
	if markerOff/store.ChunkSize != int64(buf.Len()-1)/store.ChunkSize {
		t.Fatalf("marker not in the last chunk")
	}
	res, err := env.sess.GrepToolOutput(ctx, scrollback.GrepInput{ID: id, Pattern: "FATAL", Context: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []scrollback.GrepMatch{{Line: int64(line + 1), Offset: markerOff, Text: "FATAL: the marker",
		Before: []scrollback.ContextLine{{Line: int64(line), Offset: markerOff - 16, Text: fmt.Sprintf("line %07d ok", line)}}}}
	if !reflect.DeepEqual(res.Matches, want) || res.HasMore || res.NextOffset != int64(buf.Len()) || !res.Complete || res.TotalBytes != int64(buf.Len()) {
		t.Fatalf("got %+v\nwant matches %+v", res, want)
	}
	limit := 17
	page, err := env.sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: id, Offset: res.Matches[0].Offset, Limit: &limit})
	if err != nil || page.Text != "FATAL: the marker" {
		t.Errorf("reading the match's offset: %q, %v", page.Text, err)
	}
	// Resuming from an offset counts lines from the copy's start.
	res, err = env.sess.GrepToolOutput(ctx, scrollback.GrepInput{ID: id, Pattern: `line 0000002 ok|line 05\d+ ok`, Offset: 16, Max: 2})
	if err != nil || len(res.Matches) != 2 || res.Matches[0].Line != 2 || res.Matches[1].Line != 500000 || res.Matches[1].Offset != 16*499999 ||
		!res.HasMore || res.NextOffset != 16*500000 {
		t.Errorf("from offset 16: %+v, %v", res, err)
	}
}

func TestGrepAcrossChunkBoundary(t *testing.T) {
	env := newTestEnv(t)
	// A line from 65530 to past 65560 holds a match split by the 64 KiB
	// chunk boundary, and a line that ends exactly at it.
	data := bytes.Repeat([]byte("........\n"), 7281) // 65529 bytes
	data = append(data, "x BOUNDARY-SPLIT-MATCH y\n"...)
	data = append(data, bytes.Repeat([]byte("-"), 2*store.ChunkSize-len(data)-1)...)
	data = append(data, '\n')
	data = append(data, "after\n"...)
	id := env.save(t, env.sess, data)
	for _, p := range []string{"BOUNDARY-SPLIT-MATCH", "(?i)boundary-split", `B\w+-SPLIT-M`, `^x .*y$`} {
		got := grepAll(t, env.sess, scrollback.GrepInput{ID: id, Pattern: p})
		if len(got) != 1 || got[0].Line != 7282 || got[0].Offset != 65529 || got[0].Text != "x BOUNDARY-SPLIT-MATCH y" {
			t.Errorf("%q: got %+v, want one match at line 7282, offset 65529", p, got)
		}
	}
	got := grepAll(t, env.sess, scrollback.GrepInput{ID: id, Pattern: "^after$", Context: 1})
	if len(got) != 1 || got[0].Line != 7284 || got[0].Offset != 2*store.ChunkSize || len(got[0].Before) != 1 || got[0].Before[0].Text != strings.Repeat("-", scrollback.GrepLineBytes) || !got[0].Before[0].Truncated {
		t.Errorf("line after the boundary: %+v", got)
	}
}

func TestGrepLines(t *testing.T) {
	env := newTestEnv(t)
	tests := []struct {
		name string
		data string
		in   scrollback.GrepInput
		want []scrollback.GrepMatch
	}{
		{"empty copy", "", scrollback.GrepInput{Pattern: ""}, []scrollback.GrepMatch{}},
		{"no match", "a\nb\n", scrollback.GrepInput{Pattern: "c"}, []scrollback.GrepMatch{}},
		{"crlf", "ok\r\nerror here\r\nfine\r\n", scrollback.GrepInput{Pattern: "here$"},
			[]scrollback.GrepMatch{{Line: 2, Offset: 4, Text: "error here"}}},
		{"invalid utf-8", "a\xff\xfeb\nc\n", scrollback.GrepInput{Pattern: "a.*b"},
			[]scrollback.GrepMatch{{Line: 1, Offset: 0, Text: "a\uFFFD\uFFFDb"}}},
		{"ignore case", "Error\nerror\nERR\n", scrollback.GrepInput{Pattern: "ERROR", IgnoreCase: true},
			[]scrollback.GrepMatch{{Line: 1, Offset: 0, Text: "Error"}, {Line: 2, Offset: 6, Text: "error"}}},
		{"context at the start and the end", "m1\nx\ny\nm2", scrollback.GrepInput{Pattern: "^m", Context: 2},
			[]scrollback.GrepMatch{
				{Line: 1, Offset: 0, Text: "m1", After: []scrollback.ContextLine{{2, 3, "x", false}, {3, 5, "y", false}}},
				{Line: 4, Offset: 7, Text: "m2", Before: []scrollback.ContextLine{{2, 3, "x", false}, {3, 5, "y", false}}},
			}},
		{"long line: a window at its start", strings.Repeat("é", 2000) + "\n", scrollback.GrepInput{Pattern: "é"},
			[]scrollback.GrepMatch{{Line: 1, Offset: 0, Text: strings.Repeat("é", 512), Truncated: true}}},
		// The match at 3000 is centred in 1 KiB: the window starts at
		// 3000-509 = 2491, inside an é, so on at 2492.
		{"long line: a window around the match", "x\n" + strings.Repeat("é", 1500) + "MATCH" + strings.Repeat("é", 1500) + "\n", scrollback.GrepInput{Pattern: "MATCH"},
			[]scrollback.GrepMatch{{Line: 2, Offset: 2 + 2492, Text: strings.Repeat("é", 254) + "MATCH" + strings.Repeat("é", 255), Truncated: true}}},
		{"long line: a window at its end", strings.Repeat("-", 5000) + "END\r\n", scrollback.GrepInput{Pattern: "END$"},
			[]scrollback.GrepMatch{{Line: 1, Offset: 5003 - 1024, Text: strings.Repeat("-", 1021) + "END", Truncated: true}}},
		{"a literal anchored at both ends", "5000\n15000\n50001\n5000\n", scrollback.GrepInput{Pattern: "^5000$"},
			[]scrollback.GrepMatch{{Line: 1, Offset: 0, Text: "5000"}, {Line: 4, Offset: 17, Text: "5000"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.ID = env.save(t, env.sess, []byte(tt.data))
			res, err := env.sess.GrepToolOutput(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Matches, tt.want) {
				t.Errorf("got %+v\nwant %+v", res.Matches, tt.want)
			}
		})
	}
}

func TestGrepJSON(t *testing.T) {
	env := newTestEnv(t)
	id := env.save(t, env.sess, []byte("a\nb\n"))
	res, err := env.sess.GrepToolOutput(context.Background(), scrollback.GrepInput{ID: id, Pattern: "zzz"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if want := `{"matches":[],"nextOffset":4,"hasMore":false,"totalBytes":4,"complete":true}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	res, _ = env.sess.GrepToolOutput(context.Background(), scrollback.GrepInput{ID: id, Pattern: "a", Context: 1})
	b, _ = json.Marshal(res.Matches)
	if want := `[{"line":1,"offset":0,"text":"a","truncated":false,"after":[{"line":2,"offset":2,"text":"b"}]}]`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
}

func TestGrepErrors(t *testing.T) {
	env := newTestEnv(t)
	id := env.save(t, env.sess, []byte("ab é€😀\n"))
	tests := []struct {
		name string
		in   scrollback.GrepInput
		is   error
		says string
	}{
		{"invalid pattern", scrollback.GrepInput{Pattern: "(abc"}, scrollback.ErrArgument, `pattern "(abc" is not a valid regular expression: missing closing ): ` + "`(abc`"},
		{"backreference", scrollback.GrepInput{Pattern: `(a)\1`}, scrollback.ErrArgument, "invalid escape sequence"},
		// The copy holds "ab" and, on the next line, nothing: a line-at-a-time
		// search would say no match, which is false.
		{"only across lines", scrollback.GrepInput{Pattern: `ab.*\n`}, scrollback.ErrArgument, `pattern "ab.*\\n" matches only across lines (each of its matches holds a newline), and a search matches within one line at a time; search for the part of it on one line`},
		{"negative context", scrollback.GrepInput{Pattern: "a", Context: -1}, scrollback.ErrArgument, "context -1 is out of range; give a context from 0 to 20"},
		{"context too large", scrollback.GrepInput{Pattern: "a", Context: 21}, scrollback.ErrArgument, "context 21 is out of range"},
		{"negative max", scrollback.GrepInput{Pattern: "a", Max: -1}, scrollback.ErrArgument, "max -1 is out of range; give a max from 1 to 1000"},
		{"max too large", scrollback.GrepInput{Pattern: "a", Max: 1001}, scrollback.ErrArgument, "max 1001 is out of range"},
		{"negative offset", scrollback.GrepInput{Pattern: "a", Offset: -1}, scrollback.ErrOffset, "offset -1 is negative"},
		{"offset past the end", scrollback.GrepInput{Pattern: "a", Offset: 14}, scrollback.ErrOffset, "offset 14 is past the end of the copy; the copy holds 13 bytes"},
		{"offset inside a character", scrollback.GrepInput{Pattern: "a", Offset: 10}, scrollback.ErrOffset, "offset 10 is inside a multi-byte UTF-8 character; the nearest valid offsets are 8 (before) and 12 (after)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.ID = id
			_, err := env.sess.GrepToolOutput(context.Background(), tt.in)
			if !errors.Is(err, tt.is) {
				t.Fatalf("err = %v, want %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.says) || !strings.HasPrefix(err.Error(), "grep_tool_output: ") {
				t.Errorf("error %q does not say %q", err, tt.says)
			}
		})
	}
	// Offset == totalBytes is valid and finds nothing.
	if res, err := env.sess.GrepToolOutput(context.Background(), scrollback.GrepInput{ID: id, Pattern: "", Offset: 13}); err != nil || len(res.Matches) != 0 || res.HasMore {
		t.Errorf("offset == totalBytes: %+v, %v", res, err)
	}

	// Ids from elsewhere read like ids that never existed, as for the reader.
	other, err := env.eng.NewSession(context.Background(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	var want string
	for _, bad := range []string{id, store.NewID(store.CopyPrefix), "../../etc/passwd", "' OR 1=1 --"} {
		_, err := other.GrepToolOutput(context.Background(), scrollback.GrepInput{ID: bad, Pattern: "a"})
		if !errors.Is(err, scrollback.ErrNoOutput) {
			t.Fatalf("%q: err = %v, want ErrNoOutput", bad, err)
		}
		text := strings.ReplaceAll(err.Error(), strconv.Quote(bad), "ID")
		if want == "" {
			want = text
		}
		if text != want {
			t.Errorf("error %q differs from %q", text, want)
		}
	}
	if _, err := other.GrepToolOutput(context.Background(), scrollback.GrepInput{Pattern: "a"}); !errors.Is(err, scrollback.ErrArgument) {
		t.Errorf("empty id: err = %v, want ErrArgument", err)
	}
}

// TestGrepInCodeMode: a script's tools.grep_tool_output is the same tool:
// count: true counts exactly, and a match in a long line is a window.
func TestGrepInCodeMode(t *testing.T) {
	env := newTestEnv(t)
	var seq strings.Builder
	for i := 1; i <= 100000; i++ {
		seq.WriteString(strconv.Itoa(i) + "\n")
	}
	id := env.save(t, env.sess, []byte(seq.String()))
	doc := env.save(t, env.sess, greptest.OneLineJSON(5<<20))
	res, err := env.sess.RunCode(context.Background(), scrollback.RunCodeInput{Code: fmt.Sprintf(`
const c = tools.grep_tool_output({id: %q, pattern: "^5000$", count: true});
const l = tools.grep_tool_output({id: %q, pattern: "^1$"});
const j = tools.grep_tool_output({id: %q, pattern: "NEEDLE-EDGE"});
return [c.count, "matches" in c, l.matches.length, j.matches[0].truncated, j.matches[0].text.length <= 1024, j.matches[0].text.includes("NEEDLE-EDGE")];`, id, id, doc)})
	if err != nil || res.Error != nil {
		t.Fatalf("%v %+v", err, res.Error)
	}
	if res.Preview != "[1,false,1,true,true,true]" {
		t.Errorf("script returned %s", res.Preview)
	}
}

// grepWalk follows nextOffset from 0 for at most calls calls and returns
// the matches as the reference (greptest) shows them, and whether the walk
// reached the end.
func grepWalk(t testing.TB, sess *scrollback.Session, in scrollback.GrepInput, calls int) ([]greptest.Match, bool) {
	t.Helper()
	shown := func(cs []scrollback.ContextLine) []greptest.Shown {
		var out []greptest.Shown
		for _, c := range cs {
			out = append(out, greptest.Shown{Number: c.Line, Offset: c.Offset, Text: c.Text, Truncated: c.Truncated})
		}
		return out
	}
	all := []greptest.Match{}
	for range calls {
		res, err := sess.GrepToolOutput(context.Background(), in)
		if err != nil {
			t.Fatalf("grep from %d: %v", in.Offset, err)
		}
		if res.Matches == nil || len(res.Matches) > in.Max || res.Count != 0 {
			t.Fatalf("%d matches with max %d, count %v", len(res.Matches), in.Max, res.Count)
		}
		for _, m := range res.Matches {
			all = append(all, greptest.Match{Shown: greptest.Shown{Number: m.Line, Offset: m.Offset, Text: m.Text, Truncated: m.Truncated},
				Before: shown(m.Before), After: shown(m.After)})
		}
		if !res.HasMore {
			if res.NextOffset != res.TotalBytes {
				t.Fatalf("hasMore=false with nextOffset %d != totalBytes %d", res.NextOffset, res.TotalBytes)
			}
			return all, true
		}
		if res.NextOffset <= in.Offset || len(res.Matches) == 0 {
			t.Fatalf("nextOffset %d does not move on from %d (%d matches)", res.NextOffset, in.Offset, len(res.Matches))
		}
		in.Offset = res.NextOffset
	}
	return all, false
}

// grepCount is grep_tool_output's count from offset.
func grepCount(t testing.TB, sess *scrollback.Session, in scrollback.GrepInput, offset int64) int64 {
	t.Helper()
	in.Count, in.Offset = true, offset
	res, err := sess.GrepToolOutput(context.Background(), in)
	if err != nil {
		t.Fatalf("count from %d: %v", offset, err)
	}
	if res.Matches != nil || res.HasMore || res.NextOffset != 0 {
		t.Fatalf("count from %d: %+v", offset, res)
	}
	return res.Count
}

// FuzzGrepToolOutput is the differential test of grep_tool_output over
// (copy, pattern), through a real SQLite store (64 KiB chunks, 16 KiB zstd
// frames): copies of random lines from greptest.Copy (empty, ASCII,
// multi-byte and invalid text, numbers, one-line JSON up to 6 MiB with a
// needle anywhere or across a chunk boundary, "\r\n", with and without a
// final newline) and patterns from greptest.Pattern's grammar (or, after
// '=', as written). Following nextOffset returns exactly the lines the
// reference (regexp.Match on each line of the copy split in memory)
// returns, with the same line numbers, offsets (a window's start in a long
// line), texts and context; count from 0 and from a line's start equals
// the reference's.
func FuzzGrepToolOutput(f *testing.F) {
	env := newTestEnv(f)
	// seq 1 100000: choices 0 (final newline), two PRNG bytes, 4 (numbers),
	// 0 (from 1), 0, then 50000*2 lines.
	seq := []byte{0, 0, 0, 4, 0, 0, 0xC3, 0x50}
	for _, p := range []string{`=^5000$`, `=^1$`, `=^(5000)$`, `=^5000\b`, `=5000`, `=(?m)^1$`, `=5000\n5001`, `=5000|\n`} {
		f.Add(seq, []byte(p), uint8(0))
	}
	// A 5 MiB one-line JSON document (54613*96 bytes: 0 says *96) with NEEDLE-777
	// (Literals[20]) at its end, in its middle, and across the 64 KiB
	// boundary past its middle.
	for _, where := range []byte{250, 125, 251} {
		doc := []byte{1, 0, 0, 5, 0xD5, 0x55, 0, 20, where}
		f.Add(doc, []byte("=NEEDLE-777"), uint8(0))
		f.Add(doc, []byte(`=NEEDLE-\d+`), uint8(1<<3))
	}
	f.Add([]byte{0, 1, 2, 5, 0x03, 0x00, 1, 20, 251, 9, 9, 2, 3, 3, 3, 7, 7, 7, 6, 4, 4, 0}, []byte("=(?i)needle|é$"), uint8(1))
	f.Add([]byte{1, 5, 6, 2, 7, 8, 1, 3, 1, 3, 9, 9, 6, 0, 0, 0}, []byte{5, 7, 0, 10, 1, 3, 2, 11}, uint8(6))
	f.Fuzz(func(t *testing.T, spec, pattern []byte, flags uint8) {
		re, ok := greptest.PatternOf(pattern)
		if !ok {
			t.Skip()
		}
		data := greptest.Copy(spec, true)
		// A session of its own, deleted after, keeps the database small
		// over a long run.
		sess, err := env.eng.NewSession(context.Background(), scrollback.LocalOwner)
		if err != nil {
			t.Fatal(err)
		}
		defer env.st.DeleteSession(context.Background(), scrollback.LocalOwner, sess.ID())
		in := scrollback.GrepInput{ID: env.save(t, sess, data), Pattern: re.String(), IgnoreCase: flags&1 != 0,
			Max: []int{1, 3, 50, scrollback.GrepMaxMax}[flags>>1&3], Context: int(flags>>3) % 3}
		if in.IgnoreCase {
			re = regexp.MustCompile("(?i)" + re.String())
		}
		want := greptest.Matches(data, re, in.Context, scrollback.GrepLineBytes)
		if grep.CrossesLines(re) {
			// Refused, not answered "no match": and indeed no line matches.
			if _, err := sess.GrepToolOutput(context.Background(), in); !errors.Is(err, scrollback.ErrArgument) || len(want) > 0 {
				t.Fatalf("pattern %q only across lines: err %v, %d lines match", in.Pattern, err, len(want))
			}
			return
		}
		// Walk at most 200 calls (each counts the lines before its offset
		// again): a pattern that matches most of seq 1 100000 is checked
		// on its first matches, and by its count.
		got, whole := grepWalk(t, sess, in, 200)
		if !whole && len(got) < len(want) {
			want = want[:len(got)]
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("pattern %q (ignore case %v), max %d, context %d, copy of %d bytes: %d matches, want %d\n got %.2000v\nwant %.2000v",
				in.Pattern, in.IgnoreCase, in.Max, in.Context, len(data), len(got), len(want), got, want)
		}
		from := int64(0)
		if ls := greptest.Lines(data); len(ls) > 0 {
			from = ls[int(flags)*7919%len(ls)].Start
		}
		for _, off := range []int64{0, from} {
			if n, want := grepCount(t, sess, in, off), greptest.Count(data, re, off); n != want {
				t.Fatalf("pattern %q (ignore case %v): count from %d = %d, want %d", in.Pattern, in.IgnoreCase, off, n, want)
			}
		}
	})
}

// Find the error line in a large command output without paging through it,
// then read from the match's offset.
func ExampleSession_GrepToolOutput() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "scrollback-example")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(filepath.Join(dir, "scrollback.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	sess, err := scrollback.New(st, scrollback.Options{}).NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		log.Fatal(err)
	}
	res, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "seq 1 100000; echo 'error: disk full'; echo done"})
	if err != nil {
		log.Fatal(err)
	}
	found, err := sess.GrepToolOutput(ctx, scrollback.GrepInput{ID: res.OutputID, Pattern: "^error:", Context: 1})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range found.Matches {
		fmt.Printf("line %d, offset %d: %s (then %q)\n", m.Line, m.Offset, m.Text, m.After[0].Text)
	}
	fmt.Println("hasMore:", found.HasMore, "complete:", found.Complete)
	// Output:
	// line 100001, offset 588895: error: disk full (then "done")
	// hasMore: false complete: true
}
