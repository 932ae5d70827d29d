package present

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzClip: a clipped string is at most max bytes, valid UTF-8 when its
// input is, the input itself when it fits, else a start of it followed by
// the one cut mark saying how many bytes were cut; and it ends at the end
// of a word whenever a word ends in the last quarter of what it keeps.
func FuzzClip(f *testing.F) {
	f.Add("héllo wörld, ünïcödé everywhere in this description", 20)
	f.Add(strings.Repeat("😀", 50), 30)
	f.Add("abc", 2)
	f.Add("a long line of words, cut somewhere in the middle of a word", 40)
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = int(uint(n) % 300)
		got := Clip(s, n)
		if len(got) > n && len(s) > n {
			t.Fatalf("Clip(%q, %d) = %q: %d bytes", s, n, got, len(got))
		}
		if len(s) <= n {
			if got != s {
				t.Fatalf("Clip(%q, %d) = %q: changed a string that fits", s, n, got)
			}
			return
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q: split a character", s, n, got)
		}
		kept, cut, marked := strings.Cut(got, "…(")
		if !marked {
			if n >= len(mark(len(s)))+1 || !strings.HasPrefix(s, got) {
				t.Fatalf("Clip(%q, %d) = %q: no cut mark", s, n, got)
			}
			return
		}
		if !strings.HasPrefix(s, kept) || cut != fmt.Sprintf("%d bytes cut)", len(s)-len(kept)) {
			t.Fatalf("Clip(%q, %d) = %q: not a start of the input and the mark of what was cut", s, n, got)
		}
		if !utf8.ValidString(s) || len(kept) == 0 {
			return
		}
		room := n - len(mark(len(s)))
		window := s[len(kept):min(len(s), room)]
		if r, _ := utf8.DecodeRuneInString(s[len(kept):]); isLetter(r) && isLetter(lastRune(kept)) && strings.ContainsAny(s[room-room/4:room], " ") && window != "" {
			t.Fatalf("Clip(%q, %d) = %q: cut inside a word though one ended near", s, n, got)
		}
	})
}

func isLetter(r rune) bool {
	return r != utf8.RuneError && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r > 127)
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

func TestClipMiddle(t *testing.T) {
	p := "/home/user/" + strings.Repeat("é", 300) + "/file.txt"
	got := ClipMiddle(p, 64)
	if len(got) > 64 || !utf8.ValidString(got) || !strings.HasPrefix(got, "/home/user/") || !strings.HasSuffix(got, "/file.txt") || !strings.Contains(got, " bytes cut)") {
		t.Errorf("ClipMiddle = %q", got)
	}
	if ClipMiddle("short", 64) != "short" {
		t.Error("a short string was changed")
	}
}

func TestErrorLines(t *testing.T) {
	data := []byte("ok\nerror: one\npartial Error\nfine\nERROR two\nterror and prefailure\nFAILED three\npanic: four\n  Traceback (most recent call last):\nException five\nfatal six\n")
	all := ErrorLines(data, 0, int64(len(data)), 1, 10)
	var got []string
	for _, e := range all {
		if line, _, _ := strings.Cut(string(data[e.Offset:]), "\n"); strings.TrimSpace(line) != e.Text || e.Offset > 0 && data[e.Offset-1] != '\n' {
			t.Errorf("line %d at offset %d: %q is not the line there", e.Line, e.Offset, e.Text)
		}
		got = append(got, fmt.Sprintf("%d:%s", e.Line, e.Text))
	}
	want := "2:error: one|3:partial Error|5:ERROR two|7:FAILED three|8:panic: four|9:Traceback (most recent call last):|10:Exception five|11:fatal six"
	if strings.Join(got, "|") != want {
		t.Errorf("ErrorLines =\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
	// From the middle of line 3: that line began before, so it is not
	// listed; at most 2 lines.
	from := int64(strings.Index(string(data), "Error\nfine"))
	some := ErrorLines(data, from, int64(len(data)), 3, 2)
	if len(some) != 2 || some[0].Line != 5 || some[1].Line != 7 {
		t.Errorf("ErrorLines from mid-line = %+v", some)
	}
}

// TestErrorLinesLongLine: of a line longer than ErrorLineTextMax, the
// text is a window that holds the error word, and the offset is where the
// window starts, on a character boundary, so that a read there shows it;
// the line's start, far from the word, would show no error at all (a
// one-line JSON export with "failed" 2 MB into it).
func TestErrorLinesLongLine(t *testing.T) {
	for _, tc := range []struct {
		name, line, word string
		truncated        bool
	}{
		// 40 bytes before the word falls inside an é: the window starts after it.
		{"word far into the line", strings.Repeat("é", 1000) + ` "state": "failed"` + strings.Repeat("x", 3000), "failed", true},
		{"word at the start", "ERROR " + strings.Repeat("y ", 2000), "ERROR", true},
		{"word at the end", strings.Repeat("z", 5000) + " panic", "panic", true},
		{"after spaces", strings.Repeat("w", 1000) + strings.Repeat(" ", 200) + "fatal: x" + strings.Repeat("w", 1000), "fatal", true},
		{"short line", "ok then error: short", "ok then error: short", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte("first\n" + tc.line + "\nlast\n")
			l := ErrorLines(data, 0, int64(len(data)), 1, 5)
			if len(l) != 1 {
				t.Fatalf("ErrorLines = %+v, want one line", l)
			}
			e := l[0]
			if e.Line != 2 || e.Truncated != tc.truncated || len(e.Text) > ErrorLineTextMax || !utf8.ValidString(e.Text) {
				t.Errorf("line %d, truncated %v, %d bytes: %q", e.Line, e.Truncated, len(e.Text), e.Text)
			}
			if !strings.Contains(e.Text, tc.word) {
				t.Errorf("text %q does not hold %q", e.Text, tc.word)
			}
			if e.Offset < 6 || !utf8.RuneStart(data[e.Offset]) || !strings.HasPrefix(string(data[e.Offset:]), e.Text) {
				t.Errorf("offset %d: the copy there does not start with the text %q", e.Offset, e.Text)
			}
		})
	}
}

// Over MCP the texts name MCP tools and never a CLI command; at a terminal
// they name CLI commands and never an MCP tool.
func TestSurfaces(t *testing.T) {
	id := "out_abcdefghijklmnopqrstuvwxyz"
	f := Footer{ID: id, Complete: false, Outline: "JSON object of 1 key, 10 bytes:\n  .a: number, at 5, 1 byte\n"}
	c := Cut{Size: 100000, Lines: 1000, HeadEnd: 3000, HeadLines: 30, TailFirst: 980, TailLines: 21, OmittedBytes: 95000, OmittedLines: 949,
		Errors: []ErrorLine{{Line: 500, Offset: 50000, Text: "ERROR: x"}}}
	texts := func(s Surface) []string {
		f.Surface = s
		end, _ := Count(s, 3, 10, 100, false)
		return []string{
			f.Render(c, 4096), f.Render(c, 200), f.Render(c, 100),
			PageEnd(s, id, 0, 4096, 8192, true, true), FileEnd(s, "/a b", 1, 10, 500, 99, true, true),
			GrepEnd(s, 5, 0, 99, 100, true, true), GrepEnd(s, 5, 0, 99, 100, false, false), end,
			QueryEnd(s, id, ".a", 0, 10, 20, true, true, ""), QueryEnd(s, id, ".a", 0, 10, 20, false, false, "a note"),
			Retained(s, []Ref{{Call: 1, Tool: "run_command", OutputID: id, Holds: HoldsOutput, Command: "ls", TotalBytes: 10, Complete: true}}),
		}
	}
	for _, s := range texts(MCP) {
		if strings.Contains(s, "scrollback read") || strings.Contains(s, "scrollback grep") || strings.Contains(s, "scrollback query") || strings.Contains(s, "scrollback file") || strings.Contains(s, "scrollback ls") {
			t.Errorf("MCP text names a CLI command: %q", s)
		}
	}
	for _, s := range texts(CLI("s_x")) {
		for _, tool := range []string{ReadTool, GrepTool, QueryTool, ReadFileTool + " {"} {
			if strings.Contains(s, tool) {
				t.Errorf("CLI text names the MCP tool %s: %q", tool, s)
			}
		}
	}
	if got := CLI("s_x").Read(id, 7); got != "scrollback read --session s_x --offset 7 "+id {
		t.Errorf("CLI read = %q", got)
	}
	if got := CLI("").File("/tmp/a b'c", 7); got != `scrollback file --byte-offset 7 '/tmp/a b'\''c'` {
		t.Errorf("CLI file = %q", got)
	}
	if got := MCP.Read(`a"b`, 7); got != `read_tool_output {"id":"a\"b","offset":7}` {
		t.Errorf("MCP read = %q", got)
	}
}

// Render never returns more than its room, degrades from the full footer
// to the tiny one, and MinRoom always holds the tiny one.
func TestFooterRoom(t *testing.T) {
	f := Footer{ID: "out_abcdefghijklmnopqrstuvwxyz", Status: "exit status 2", Gap: &Gap{Offset: 10, Bytes: 20, Lines: 2},
		Outline: strings.Repeat("  .k: number, at 1, 1 byte\n", 40), Whole: []WholeCopy{{ID: "out_b", Call: 1, Tool: "run_command", Command: "make"}}}
	c := WorstCut(1<<23, 1<<20)
	c.Errors = []ErrorLine{{Line: 5, Offset: 50, Text: "error: a"}, {Line: 6, Offset: 60, Text: "error: b"}}
	seen := map[string]bool{}
	for room := 0; room <= 4096; room++ {
		got := f.Render(c, room)
		if len(got) > room {
			t.Fatalf("room %d: %d bytes", room, len(got))
		}
		switch {
		case got == "":
			seen["none"] = true
		case strings.Contains(got, "Error-like lines"):
			seen["full with errors"] = true
		case strings.Count(got, "\n") > 1:
			seen["full"] = true
		case strings.Contains(got, "not shown"):
			seen["short"] = true
		default:
			seen["tiny"] = true
		}
		if room >= f.MinRoom(1<<23, 1<<20) && got == "" {
			t.Fatalf("room %d >= MinRoom and no footer", room)
		}
	}
	if len(seen) != 5 {
		t.Errorf("levels seen: %v", seen)
	}
	// A footer that points at the copy holding the whole output offers no
	// jq route into the wrapper.
	if got := f.Render(c, 8192); strings.Contains(got, QueryTool) || !strings.Contains(got, "is copy out_b: read it with "+ReadTool) {
		t.Errorf("footer with a whole copy:\n%s", got)
	}
}

func TestRetainedLabels(t *testing.T) {
	got := Retained(MCP, []Ref{
		{Call: 1, Tool: "run_command", OutputID: "out_a", TotalBytes: 500000, Complete: true, Holds: HoldsOutput, Command: "seq 1 100000"},
		{Call: 1, Tool: "run_command", OutputID: "out_b", TotalBytes: 30000, Complete: true, Holds: HoldsResult, Command: "seq 1 100000"},
		{Call: 2, Tool: "fetch", TotalBytes: 30000, Holds: HoldsResult, RecoveryError: NotSaved("disk full")},
		{Tool: "run_code", OutputID: "out_c", TotalBytes: 65646, Complete: false, Holds: HoldsLogs},
		{Tool: "run_code", TotalBytes: 49890, Holds: HoldsLogs, RecoveryError: NotSaved("disk full")},
	})
	for _, want := range []string{
		"  out_a: call 1 run_command `seq 1 100000`: its whole output, 500000 bytes, complete\n",
		"  out_b: call 1 run_command `seq 1 100000`: the result the script received; the whole output is out_a, 30000 bytes, complete\n",
		"  call 2 fetch: the result the script received, not saved: the retained copy could not be saved: disk full\n",
		// The console output's copy was made by no call: it says what it is.
		"  out_c: the script's console output (logs), 65646 bytes, incomplete (complete=false)\n",
		"  the script's console output (logs), not saved: the retained copy could not be saved: disk full\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("retained list lacks %q:\n%s", want, got)
		}
	}
	if Retained(MCP, nil) != "" {
		t.Error("an empty list has text")
	}
}

// BenchmarkErrorLines8MiB: searching a retained copy of the copy cap's
// size, with no error in it (every byte read), for a footer.
func BenchmarkErrorLines8MiB(b *testing.B) {
	line := []byte("2024-01-01T00:00:00Z INFO request handled path=/api/v1/items status=200 ms=12\n")
	data := bytes.Repeat(line, (8<<20)/len(line)+1)[:8<<20]
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if got := ErrorLines(data, 0, int64(len(data)), 1, MaxErrorLines); got != nil {
			b.Fatal(got)
		}
	}
}

// BenchmarkErrorLinesRandom8MiB: the same over random bytes (cat of a
// binary file), where error words' first letters are frequent but words
// rare.
func BenchmarkErrorLinesRandom8MiB(b *testing.B) {
	data := make([]byte, 8<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ErrorLines(data, 0, int64(len(data)), 1, MaxErrorLines)
	}
}

// BenchmarkCountLines8MiB is BenchmarkErrorLines8MiB's reference: counting
// the newlines of the same copy, which a preview does anyway.
func BenchmarkCountLines8MiB(b *testing.B) {
	line := []byte("2024-01-01T00:00:00Z INFO request handled path=/api/v1/items status=200 ms=12\n")
	data := bytes.Repeat(line, (8<<20)/len(line)+1)[:8<<20]
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if bytes.Count(data, []byte{'\n'}) == 0 {
			b.Fatal("no lines")
		}
	}
}

// TestStderrBlockOverhead: what StderrBlock adds around a stderr of any
// length up to 1 MiB, besides the status, is within StderrBlockOverhead.
func TestStderrBlockOverhead(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 999, 4096, 99999, 1 << 20} {
		stderr := strings.Repeat("x", n)
		if got := len(StderrBlock("", []byte(stderr))) - n; got > StderrBlockOverhead {
			t.Errorf("a %d-byte stderr gets %d bytes around it, over StderrBlockOverhead (%d)", n, got, StderrBlockOverhead)
		}
	}
}

// TestErrorLinesWordStarts: the eight-bytes-at-a-time search for error
// words finds the lines a byte-by-byte reading of the same rule finds, in
// random text dense with their letters and with bytes that lower-case to
// them (E, F, P, T; 0xC5, 0xE5, which do not).
func TestErrorLinesWordStarts(t *testing.T) {
	tokens := []string{"error", "ERROR", "Failed", "fai", "panic:", "pan", "Exception", "traceback", "FATAL", "fat",
		"e", "T", "p", "xerror", "_fail", "0fatal", "é", "\xc5", "\xe5rror", "\x05", " ", " ", "-", ":", "\n", "\n"}
	rng := rand.New(rand.NewPCG(1, 2))
	found := 0
	for n := range 3000 {
		var data []byte
		for range rng.IntN(40) {
			data = append(data, tokens[rng.IntN(len(tokens))]...)
		}
		from := int64(0)
		if len(data) > 0 {
			from = int64(rng.IntN(len(data)))
		}
		line := int64(bytes.Count(data[:from], []byte{'\n'})) + 1
		got := ErrorLines(data, from, int64(len(data)), line, 1000)
		want := errorLineStarts(data, from)
		found += len(want)
		if len(got) != len(want) {
			t.Fatalf("case %d %q from %d: %d lines, want %d (%v)", n, data, from, len(got), len(want), want)
		}
		for i := range got {
			if msg := errorLineAt(data, got[i], want[i]); msg != "" {
				t.Fatalf("case %d %q from %d: line %d: %s", n, data, from, i, msg)
			}
		}
	}
	if found < 1000 {
		t.Fatalf("only %d error-like lines in all the cases", found)
	}
}

// errorLineStarts is ErrorLines' rule read byte by byte: the offsets of
// the lines starting at or after from (a line begun before from is not
// one) that hold an error word at a word start.
func errorLineStarts(data []byte, from int64) []int64 {
	var want []int64
	for off := from; off < int64(len(data)); {
		end := off + int64(lineLen(data[off:]))
		if off == from && from > 0 && data[from-1] != '\n' {
			off = end
			continue
		}
		for i := off; i < end; i++ {
			if (i == 0 || !isWordByte(data[i-1])) && errorWordAt(data[i:]) {
				want = append(want, off)
				break
			}
		}
		off = end
	}
	return want
}

// errorLineAt checks e against the error-like line that starts at start
// in data, as ErrorLine says: a line of at most ErrorLineTextMax bytes is
// listed whole from its start; of a longer one the text is a window, so
// Offset is where the window starts: in the line, not past its first error
// word, and Truncated is set. It returns what is wrong, or "".
func errorLineAt(data []byte, e ErrorLine, start int64) string {
	end := start + int64(lineLen(data[start:]))
	if n := len(bytes.TrimRight(data[start:end], "\r\n")); n <= ErrorLineTextMax {
		if e.Offset != start || e.Truncated {
			return fmt.Sprintf("at %d (truncated %v), want the whole %d-byte line from %d", e.Offset, e.Truncated, n, start)
		}
		return ""
	}
	word := start
	for word < end && !((word == 0 || !isWordByte(data[word-1])) && errorWordAt(data[word:])) {
		word++
	}
	if !e.Truncated || e.Offset < start || e.Offset > word {
		return fmt.Sprintf("at %d (truncated %v), want a window of the line [%d, %d) starting by its error word at %d", e.Offset, e.Truncated, start, end, word)
	}
	return ""
}

// FuzzErrorLines: the eight-bytes-at-a-time search lists the lines, and
// only those, that the byte-by-byte rule finds, with their numbers.
func FuzzErrorLines(f *testing.F) {
	f.Add([]byte("ok\nerror: one\npartial Error\nterror\nFAILED\n"), 0)
	f.Add([]byte("xx Exception\xe5rror\x05Traceback\n\nfatal"), 5)
	f.Add(bytes.Repeat([]byte("pa fa tr ex er "), 9), 3)
	f.Fuzz(func(t *testing.T, data []byte, from int) {
		if len(data) == 0 {
			return
		}
		from = min(max(from, 0), len(data)-1)
		line := int64(bytes.Count(data[:from], []byte{'\n'})) + 1
		got := ErrorLines(data, int64(from), int64(len(data)), line, len(data)+1)
		want := errorLineStarts(data, int64(from))
		if len(got) != len(want) {
			t.Fatalf("%q from %d: %d lines, want %d (%v)", data, from, len(got), len(want), want)
		}
		for i, e := range got {
			if msg := errorLineAt(data, e, want[i]); msg != "" {
				t.Fatalf("%q from %d: line %d: %s", data, from, i, msg)
			}
			if n := int64(bytes.Count(data[:e.Offset], []byte{'\n'})) + 1; e.Line != n {
				t.Fatalf("%q from %d: the line at %d numbered %d, want %d", data, from, e.Offset, e.Line, n)
			}
		}
	})
}

// FuzzErrorScanner: a scan done in steps over growing prefixes of a copy
// finds what one ScanErrors of the whole copy finds, line numbers and
// texts included, wherever the steps stop (mid-line, mid-character, at
// an error word) and however many error-like lines there are.
func FuzzErrorScanner(f *testing.F) {
	f.Add([]byte("ok\nerror: one\npartial Error\nterror\nFAILED\n"), 3, []byte{5, 9, 2})
	f.Add(bytes.Repeat([]byte("fatal: x\nok\n"), 40), 7, []byte{200, 1, 100})
	f.Add([]byte("no newline at all, error here"), 0, []byte{4, 4})
	f.Fuzz(func(t *testing.T, data []byte, from int, steps []byte) {
		from = min(max(from, 0), len(data)+2)
		s := NewErrorScanner(int64(from))
		n := 0
		for _, st := range steps {
			n = min(n+int(st), len(data))
			s.Step(data[:n])
		}
		want := ScanErrors(data, int64(from))
		if got := s.Finish(data, int64(from)); !reflect.DeepEqual(got, want) {
			t.Fatalf("%q from %d, steps %v:\n got %+v\nwant %+v", data, from, steps, got, want)
		}
	})
}

// TestErrorScannerSteps: over a log with error-like lines scattered in
// it, steps of every size up to the log's length give ScanErrors'
// result, and one step that reads the whole log leaves Finish nothing to
// search.
func TestErrorScannerSteps(t *testing.T) {
	var b strings.Builder
	for i := range 400 {
		switch i % 37 {
		case 5:
			fmt.Fprintf(&b, "%04d ERROR disk %d failed\n", i, i)
		case 20:
			fmt.Fprintf(&b, "%04d panic: at %d\n", i, i)
		default:
			fmt.Fprintf(&b, "%04d INFO ok\n", i)
		}
	}
	data := []byte(b.String())
	for _, from := range []int64{0, 1, 900} {
		want := ScanErrors(data, from)
		if len(want.Lines) < MaxErrorLines {
			t.Fatalf("from %d: %d lines, the log has more", from, len(want.Lines))
		}
		for step := 1; step <= len(data); step = step*3 + 1 {
			s := NewErrorScanner(from)
			for n := step; n < len(data); n += step {
				s.Step(data[:n])
			}
			if got := s.Finish(data, from); !reflect.DeepEqual(got, want) {
				t.Fatalf("from %d, steps of %d: %+v, want %+v", from, step, got, want)
			}
		}
		// From another offset than the scanner's, the whole copy is searched.
		if got := NewErrorScanner(from+5).Finish(data, from); !reflect.DeepEqual(got, want) {
			t.Fatalf("from %d, scanner from %d: %+v, want %+v", from, from+5, got, want)
		}
	}
}

// TestErrorWordsEveryCase: each error word is found in lower, upper and
// title case at every alignment in the eight bytes the search reads at a
// time, so that a word added to errorWords is not missed by the search's
// letter pairs.
func TestErrorWordsEveryCase(t *testing.T) {
	for _, w := range errorWords {
		lower := string(w)
		for _, v := range []string{lower, strings.ToUpper(lower), strings.ToUpper(lower[:1]) + lower[1:], strings.ToUpper(lower[:2]) + lower[2:]} {
			for pad := range 17 {
				data := []byte(strings.Repeat("x", pad) + " " + v + "!\nok\n")
				got := ErrorLines(data, 0, int64(len(data)), 1, 5)
				if len(got) != 1 || got[0].Offset != 0 {
					t.Errorf("%q: %+v, want the first line", data, got)
				}
			}
		}
	}
}

// A search or count that started past the copy's start never says it went
// through the whole copy, nor that no line of it matches.
func TestGrepEndOffset(t *testing.T) {
	for _, c := range []struct {
		s        Surface
		offset   int64
		complete bool
		want     string
	}{
		{MCP, 0, true, "[scrollback: searched the whole retained copy (100 bytes); it holds everything the tool produced]"},
		{MCP, 40, true, "[scrollback: searched from offset 40 to the end of the retained copy (100 bytes); it holds everything the tool produced]"},
		{MCP, 40, false, "[scrollback: searched from offset 40 to the end of the retained copy (100 bytes), but the copy is incomplete"},
	} {
		if got := GrepEnd(c.s, 0, c.offset, 100, 100, false, c.complete); !strings.HasPrefix(got, c.want) {
			t.Errorf("GrepEnd from %d (complete %v) = %q, want %q", c.offset, c.complete, got, c.want)
		}
	}
	for _, c := range []struct {
		offset   int64
		complete bool
		want     string
	}{
		{0, true, "no line of out_x matches"},
		{40, true, "no line of out_x from offset 40 on matches"},
		{40, false, "no line of out_x from offset 40 on matches; the copy is incomplete"},
	} {
		if got := GrepNone("out_x", c.offset, c.complete); !strings.HasPrefix(got, c.want) || (c.complete && got != c.want) {
			t.Errorf("GrepNone from %d (complete %v) = %q, want %q", c.offset, c.complete, got, c.want)
		}
	}
	for _, c := range []struct {
		offset   int64
		complete bool
		text     string
		end      string
	}{
		{0, true, "3 lines match", "[scrollback: counted over the whole retained copy (100 bytes); it holds everything the tool produced]"},
		{40, true, "3 lines match from offset 40", "[scrollback: counted from offset 40 to the end of the retained copy (100 bytes); it holds everything the tool produced]"},
		{40, false, "3 lines match from offset 40", "[scrollback: counted from offset 40 to the end of the retained copy (100 bytes), but the copy is incomplete"},
	} {
		if text, end := Count(MCP, 3, c.offset, 100, c.complete); text != c.text || !strings.HasPrefix(end, c.end) {
			t.Errorf("Count from %d (complete %v) = %q, %q; want %q, %q", c.offset, c.complete, text, end, c.text, c.end)
		}
	}
}

// A footer with too little room for the whole outline shows its start
// rather than none of it: first the root's members without theirs (so a
// small trailing key such as .total stays), then fewer of those, each form
// saying that it is cut; the outline goes only when its root line alone
// does not fit.
func TestFooterOutlineCut(t *testing.T) {
	outline := "JSON object of 3 keys, 44846 bytes:\n" +
		"  .items: array of 1000, at 9, 44800 bytes\n" +
		"    .items[0]: object of 3 keys, at 10, 41 bytes\n" +
		"    .items[999]: object of 3 keys, at 44760, 47 bytes\n" +
		"  .summary: object of 2 keys, at 44820, 25 bytes\n" +
		"    .summary.open: number, at 44828, 3 bytes\n" +
		"  .total: number, at 44841, 4 bytes\n"
	f := Footer{ID: "out_x", Complete: true, Outline: outline}
	c := WorstCut(44846, 1)
	whole := f.Render(c, 8192)
	if !strings.Contains(whole, outline) || strings.Contains(whole, OutlineCut) {
		t.Fatalf("with room, the whole outline and no cut note:\n%s", whole)
	}
	var shown []string
	for room := len(whole) - 1; room > 0; room-- {
		got := f.Render(c, room)
		if len(got) > room {
			t.Fatalf("room %d: %d bytes", room, len(got))
		}
		if !strings.Contains(got, "JSON: query it") {
			break
		}
		if !strings.Contains(got, OutlineCut) {
			t.Fatalf("room %d: an outline shown in part does not say so:\n%s", room, got)
		}
		body := got[strings.Index(got, "Outline (offset where each value starts):\n")+len("Outline (offset where each value starts):\n") : strings.Index(got, OutlineCut)]
		if len(shown) == 0 || shown[len(shown)-1] != body {
			shown = append(shown, body)
		}
	}
	want := []string{
		"JSON object of 3 keys, 44846 bytes:\n  .items: array of 1000, at 9, 44800 bytes\n  .summary: object of 2 keys, at 44820, 25 bytes\n  .total: number, at 44841, 4 bytes\n",
		"JSON object of 3 keys, 44846 bytes:\n  .items: array of 1000, at 9, 44800 bytes\n  .summary: object of 2 keys, at 44820, 25 bytes\n",
		"JSON object of 3 keys, 44846 bytes:\n  .items: array of 1000, at 9, 44800 bytes\n",
		"JSON object of 3 keys, 44846 bytes:\n",
	}
	if strings.Join(shown, "|") != strings.Join(want, "|") {
		t.Errorf("outline forms, as the room shrinks:\n%q\nwant\n%q", shown, want)
	}
}
