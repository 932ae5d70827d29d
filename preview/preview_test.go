package preview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/present"
)

// boundaries returns, for each offset 0..len(b), whether it is a character
// boundary when b is decoded left to right, each invalid byte a character.
func boundaries(b []byte) []bool {
	ok := make([]bool, len(b)+1)
	for i := 0; i < len(b); {
		ok[i] = true
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	ok[len(b)] = true
	return ok
}

// validForm is the reference valid form: each invalid byte as U+FFFD.
func validForm(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		sb.WriteRune(r) // RuneError for an invalid byte, size 1
		b = b[size:]
	}
	return sb.String()
}

type span struct{ start, end int } // a line: data[start:end], newline included

func lineSpans(b []byte) []span {
	var out []span
	start := 0
	for i, c := range b {
		if c == '\n' {
			out = append(out, span{start, i + 1})
			start = i + 1
		}
	}
	if start < len(b) {
		out = append(out, span{start, len(b)})
	}
	return out
}

var callRE = regexp.MustCompile(`\{"id":"(?:[^"\\]|\\.)*","offset":\d+\}`)

// check asserts every invariant of a preview of data under budget with
// footer f, computing each expected number the slow, obvious way.
func check(t *testing.T, data []byte, budget int, f Footer, p Preview) {
	t.Helper()
	checkShown(t, data, budget, budget, f, p)
}

// checkShown is check for a preview cut to at most shown bytes when the
// data does not fit budget.
func checkShown(t *testing.T, data []byte, budget, shown int, f Footer, p Preview) {
	t.Helper()
	if budget <= 0 {
		budget = Budget
	}
	if shown <= 0 || shown > budget {
		shown = budget
	}
	if !utf8.ValidString(p.Text) {
		t.Fatalf("Text is not valid UTF-8: %q", p.Text)
	}
	if len(p.Text) > budget || p.Truncated && len(p.Text) > shown {
		t.Fatalf("len(Text) = %d > budget %d or shown %d", len(p.Text), budget, shown)
	}
	n := int64(len(data))
	lines := lineSpans(data)
	if p.TotalLines != int64(len(lines)) {
		t.Fatalf("TotalLines = %d, want %d", p.TotalLines, len(lines))
	}
	if len(validForm(data)) <= budget {
		if p.Truncated || p.Text != validForm(data) || p.HeadEnd != n || p.TailStart != n || p.HeadLines != int64(len(lines)) {
			t.Fatalf("data that fits: got %+v", p)
		}
		return
	}
	if !p.Truncated {
		t.Fatalf("data of valid length %d > %d not Truncated", len(validForm(data)), budget)
	}
	if !(0 <= p.HeadEnd && p.HeadEnd <= p.TailStart && p.TailStart <= n) {
		t.Fatalf("HeadEnd %d, TailStart %d out of order for %d bytes", p.HeadEnd, p.TailStart, n)
	}
	ok := boundaries(data)
	if !ok[p.HeadEnd] || !ok[p.TailStart] {
		t.Fatalf("HeadEnd %d (%v) or TailStart %d (%v) inside a character", p.HeadEnd, ok[p.HeadEnd], p.TailStart, ok[p.TailStart])
	}
	head, tail := validForm(data[:p.HeadEnd]), validForm(data[p.TailStart:])
	if !strings.HasPrefix(p.Text, head) || !strings.HasSuffix(p.Text[len(head):], tail) {
		t.Fatalf("Text is not head+footer+tail:\n%q\nhead %q\ntail %q", p.Text, head, tail)
	}
	foot := p.Text[len(head) : len(p.Text)-len(tail)]
	if p.OmittedBytes != p.TailStart-p.HeadEnd {
		t.Fatalf("OmittedBytes = %d, want %d", p.OmittedBytes, p.TailStart-p.HeadEnd)
	}
	var headLines, tailLines, omitted int64
	for _, l := range lines {
		switch {
		case int64(l.start) < p.HeadEnd:
			headLines++
			if int64(l.end) > p.TailStart {
				tailLines++
			}
		case int64(l.end) > p.TailStart:
			tailLines++
		default:
			omitted++
		}
	}
	if p.HeadLines != headLines || p.TailLines != tailLines || p.OmittedLines != omitted {
		t.Fatalf("lines head/tail/omitted = %d/%d/%d, want %d/%d/%d", p.HeadLines, p.TailLines, p.OmittedLines, headLines, tailLines, omitted)
	}
	if foot == "" {
		// No room for any footer: the head only.
		if p.TailStart != n {
			t.Fatalf("a tail with no footer marking the gap: %+v", p)
		}
		return
	}
	if strings.HasPrefix(foot, "\n") != (p.HeadEnd > 0 && data[p.HeadEnd-1] != '\n') {
		t.Fatalf("footer %q: starts on a new line only after a head cut mid-line", foot)
	}
	body := strings.TrimPrefix(foot, "\n")
	if !strings.HasPrefix(body, "[...") || !strings.HasSuffix(body, "]\n") {
		t.Fatalf("footer not bracketed: %q", foot)
	}
	if !strings.Contains(foot, fmt.Sprint(p.OmittedBytes, " bytes")) {
		t.Fatalf("footer %q does not say %d bytes", foot, p.OmittedBytes)
	}
	calls := callRE.FindAllStringIndex(foot, -1)
	if f.ID == "" {
		if calls != nil {
			t.Fatalf("footer offers a call with no copy: %q", foot)
		}
		if !strings.Contains(foot, "not saved") && !strings.Contains(foot, "Recovery unavailable") {
			t.Fatalf("footer does not say the copy is unavailable: %q", foot)
		}
		return
	}
	if f.Surface.IsCLI() {
		if want := f.Surface.Read(f.ID, p.HeadEnd); !strings.Contains(foot, want) {
			t.Fatalf("footer %q lacks %q", foot, want)
		}
		return
	}
	if calls == nil {
		t.Fatalf("footer has no continuing call: %q", foot)
	}
	tool := present.ReadTool
	last := calls[0]
	m := []string{foot[:last[0]], foot[last[0]:last[1]]}
	var args struct {
		ID     string `json:"id"`
		Offset int64  `json:"offset"`
	}
	if err := json.Unmarshal([]byte(m[1]), &args); err != nil {
		t.Fatalf("call arguments %s are not JSON: %v", m[1], err)
	}
	if !strings.HasSuffix(m[0], tool+" ") || args.ID != strings.ToValidUTF8(f.ID, "\uFFFD") || args.Offset != p.HeadEnd {
		t.Fatalf("call %q, want %s with id %q offset %d", foot[last[0]-len(tool)-1:last[1]], tool, f.ID, p.HeadEnd)
	}
}

func TestFits(t *testing.T) {
	tests := []struct {
		name   string
		data   string
		budget int
		want   bool
	}{
		{"empty", "", 10, true},
		{"exactly the budget", "0123456789", 10, true},
		{"one byte over", "0123456789a", 10, false},
		{"multi-byte exactly", "ééééé", 10, true},
		{"multi-byte over", "éééééa", 10, false},
		{"invalid bytes grow", "\xff\xff\xff", 8, false},
		{"invalid bytes just fit", "\xff\xff\xff", 9, true},
		{"zero budget means Budget", strings.Repeat("x", Budget), 0, true},
		{"zero budget means Budget, over", strings.Repeat("x", Budget+1), 0, false},
		{"negative budget means Budget", "x", -5, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Fits([]byte(tt.data), tt.budget); got != tt.want {
				t.Errorf("Fits(%q, %d) = %v, want %v", tt.data, tt.budget, got, tt.want)
			}
		})
	}
}

func TestRenderWhole(t *testing.T) {
	tests := []struct {
		name, data, want string
		lines            int64
	}{
		{"empty", "", "", 0},
		{"one line", "hello\n", "hello\n", 1},
		{"unterminated", "a\nb", "a\nb", 2},
		{"invalid bytes", "a\xffb\xc3", "a\uFFFDb\uFFFD", 1},
		{"exactly the budget", strings.Repeat("y", 64), strings.Repeat("y", 64), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Render([]byte(tt.data), Options{Budget: 64}, Footer{ID: "out_x"})
			if p.Truncated || p.Text != tt.want || p.TotalLines != tt.lines || p.HeadLines != tt.lines ||
				p.HeadEnd != int64(len(tt.data)) || p.TailStart != int64(len(tt.data)) {
				t.Errorf("Render(%q) = %+v, want whole %q with %d lines", tt.data, p, tt.want, tt.lines)
			}
		})
	}
}

func numbered(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d %s\n", i, strings.Repeat("x", i%50))
	}
	return b.Bytes()
}

func TestRenderTruncated(t *testing.T) {
	lines := numbered(5000)
	tests := []struct {
		name   string
		data   []byte
		opts   Options
		f      Footer
		want   []string // substrings of the footer
		absent []string
		// expectations on the cut; -1 = not checked
		headEnd, tailStart int64
	}{
		{
			name: "lines, complete copy", data: lines, opts: Options{Budget: 4096},
			f:       Footer{ID: "out_abc", Complete: true},
			want:    []string{"whole lines) not shown, of", "The retained copy is complete", `read_tool_output {"id":"out_abc","offset":`, `grep_tool_output {"id":"out_abc","pattern":"<RE2>"}`, "Before saying a line, field or record is absent", "pagination", "uncertain"},
			absent:  []string{"mid-line", "incomplete"},
			headEnd: -1, tailStart: -1,
		},
		{
			name: "incomplete copy with status and gap", data: lines, opts: Options{Budget: 4096},
			f:       Footer{ID: "out_abc", Status: "exit status 2", Gap: &Gap{Offset: 100, Bytes: 5000, Lines: 70}},
			want:    []string{"incomplete (complete=false)", "Status: exit status 2.", "lacks 5000 bytes (70 lines) of what the tool produced, at offset 100"},
			headEnd: -1, tailStart: -1,
		},
		{
			name: "copy not saved", data: lines, opts: Options{Budget: 4096},
			f:       Footer{Unavailable: "sqlite: database or disk is full"},
			want:    []string{"not saved (sqlite: database or disk is full)", "cannot be read back", "uncertain"},
			absent:  []string{"read_tool_output", "complete"},
			headEnd: -1, tailStart: -1,
		},
		{
			name: "no copy, no reason", data: lines, opts: Options{Budget: 4096},
			want:    []string{"The output was not saved, so the bytes not shown cannot be read back."},
			headEnd: -1, tailStart: -1,
		},
		{
			name: "at a terminal", data: lines, opts: Options{Budget: 4096},
			f:       Footer{ID: "out_abc", Surface: present.CLI("s_1")},
			want:    []string{"scrollback read --session s_1 --offset ", "scrollback grep --session s_1 out_abc '<RE2>'"},
			absent:  []string{"read_tool_output", "grep_tool_output", "{"},
			headEnd: -1, tailStart: -1,
		},
		{
			name: "one long line", data: bytes.Repeat([]byte("ab"), 50000), opts: Options{Budget: 3000},
			f:       Footer{ID: "out_x", Complete: true},
			want:    []string{"(0 whole lines)", "Above: line 1 (cut mid-line); below: line 1 (from mid-line)"},
			headEnd: -1, tailStart: -1,
		},
		{
			name: "no head", data: lines, opts: Options{Budget: 4096, HeadBytes: -1},
			f:       Footer{ID: "out_x", Complete: true},
			want:    []string{"Above: nothing", `"offset":0}`},
			headEnd: 0, tailStart: -1,
		},
		{
			name: "no tail", data: lines, opts: Options{Budget: 4096, TailBytes: -1},
			f:       Footer{ID: "out_x", Complete: true},
			want:    []string{"below: nothing"},
			headEnd: -1, tailStart: int64(len(lines)),
		},
		{
			name: "head bytes given", data: bytes.Repeat([]byte("z"), 10000), opts: Options{Budget: 4096, HeadBytes: 100, TailBytes: 50},
			f:       Footer{ID: "out_x"},
			headEnd: 100, tailStart: 10000 - 50,
		},
		{
			name: "head bytes over the budget are clamped", data: bytes.Repeat([]byte("z"), 10000), opts: Options{Budget: 4096, HeadBytes: 1 << 30},
			f:       Footer{ID: "out_x"},
			headEnd: -1, tailStart: 10000,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Render(tt.data, tt.opts, tt.f)
			check(t, tt.data, tt.opts.Budget, tt.f, p)
			for _, w := range tt.want {
				if !strings.Contains(p.Text, w) {
					t.Errorf("footer lacks %q:\n%s", w, footerOf(tt.data, p))
				}
			}
			for _, w := range tt.absent {
				if strings.Contains(footerOf(tt.data, p), w) {
					t.Errorf("footer has %q:\n%s", w, footerOf(tt.data, p))
				}
			}
			if tt.headEnd >= 0 && p.HeadEnd != tt.headEnd {
				t.Errorf("HeadEnd = %d, want %d", p.HeadEnd, tt.headEnd)
			}
			if tt.tailStart >= 0 && p.TailStart != tt.tailStart {
				t.Errorf("TailStart = %d, want %d", p.TailStart, tt.tailStart)
			}
		})
	}
}

func footerOf(data []byte, p Preview) string {
	head, tail := validForm(data[:p.HeadEnd]), validForm(data[p.TailStart:])
	return p.Text[len(head) : len(p.Text)-len(tail)]
}

func TestFooterIsCompact(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef\n"), 500000) // 8.5 MB, 7-digit numbers
	f := Footer{ID: "out_abcdefghijklmnopqrstuvwxyz", Complete: true}
	if foot := footerOf(data, Render(data, Options{}, f)); len(foot) > 600 {
		t.Errorf("footer is %d bytes, want at most 600:\n%s", len(foot), foot)
	}
	f.Unavailable, f.ID = "sqlite: database or disk is full", ""
	if foot := footerOf(data, Render(data, Options{}, f)); len(foot) > 600 {
		t.Errorf("footer is %d bytes, want at most 600:\n%s", len(foot), foot)
	}
}

func TestSplit(t *testing.T) {
	if h, tl := Split(ShownBudget); h != ShownHead || tl != ShownTail || ShownHead+ShownTail+footerRoom(ShownBudget) != ShownBudget {
		t.Errorf("Split(%d) = %d, %d; want %d, %d and the rest, %d, for the footer", ShownBudget, h, tl, ShownHead, ShownTail, ShownBudget-ShownHead-ShownTail)
	}
	data := bytes.Repeat([]byte("z"), 100000) // no newlines: exact cuts
	p := Render(data, Options{}, Footer{ID: "out_x", Complete: true})
	check(t, data, Budget, Footer{ID: "out_x", Complete: true}, p)
	head, tail := p.HeadEnd, int64(len(data))-p.TailStart
	if d := 2*head - 3*tail; d < -5 || d > 5 {
		t.Errorf("head %d, tail %d: want three fifths and two fifths", head, tail)
	}
	if used := len(p.Text); used < Budget-slackMargin-20 {
		t.Errorf("Text is %d bytes: the budget %d is not used", used, Budget)
	}
}

// Once retained, a result shows at most ShownBudget: the default head and
// tail, the footer between them; a caller's head and tail make it grow, up
// to the budget.
func TestShown(t *testing.T) {
	data := bytes.Repeat([]byte("z"), 100000)
	f := Footer{ID: "out_x", Complete: true}
	p := Render(data, Options{Shown: ShownBudget}, f)
	checkShown(t, data, Budget, ShownBudget, f, p)
	if p.HeadEnd != ShownHead || int64(len(data))-p.TailStart != ShownTail {
		t.Errorf("head %d, tail %d: want %d and %d", p.HeadEnd, int64(len(data))-p.TailStart, ShownHead, ShownTail)
	}
	p = Render(data, Options{Shown: ShownBudget, HeadBytes: 10000, TailBytes: 5000}, f)
	check(t, data, Budget, f, p)
	if p.HeadEnd != 10000 || p.TailStart != int64(len(data))-5000 || len(p.Text) > 10000+5000+footerRoom(ShownBudget) {
		t.Errorf("head %d, tail %d, %d bytes: want what the caller asked and a footer", p.HeadEnd, int64(len(data))-p.TailStart, len(p.Text))
	}
	p = Render(data, Options{Shown: ShownBudget, HeadBytes: 300}, f)
	checkShown(t, data, Budget, ShownBudget, f, p)
	if tail := int64(len(data)) - p.TailStart; p.HeadEnd != 300 || tail != int64(ShownBudget-footerRoom(ShownBudget)-300) {
		t.Errorf("head %d, tail %d: want 300 and what it leaves", p.HeadEnd, tail)
	}
}

// The footer lists the first error-like lines the preview does not show,
// with their line numbers and offsets, and none that it shows.
func TestFooterErrorLines(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		switch i {
		case 2, 1500, 2999:
			fmt.Fprintf(&b, "line %d: ERROR: disk %d on fire\n", i, i)
		case 1700:
			fmt.Fprintf(&b, "line %d: panic: runtime error\n", i)
		case 1800:
			fmt.Fprintf(&b, "line %d: terror and prefailure are fine\n", i)
		default:
			fmt.Fprintf(&b, "line %d: ok\n", i)
		}
	}
	data := []byte(b.String())
	p := Render(data, Options{Shown: ShownBudget}, Footer{ID: "out_x", Complete: true})
	checkShown(t, data, Budget, ShownBudget, Footer{ID: "out_x", Complete: true}, p)
	foot := footerOf(data, p)
	at := func(line int) int64 { return int64(strings.Index(string(data), fmt.Sprintf("line %d:", line))) }
	for _, want := range []string{
		fmt.Sprintf("  1500:%d: line 1500: ERROR: disk 1500 on fire\n", at(1500)),
		fmt.Sprintf("  1700:%d: line 1700: panic: runtime error\n", at(1700)),
	} {
		if !strings.Contains(foot, want) {
			t.Errorf("footer lacks %q:\n%s", want, foot)
		}
	}
	for _, not := range []string{"disk 2 on", "disk 2999", "terror"} {
		if strings.Contains(foot, not) {
			t.Errorf("footer lists %q, which is shown or no error:\n%s", not, foot)
		}
	}
	// The same lines when a caller searched the data beforehand (while it
	// saved the copy), from where the head can end, for any split.
	for _, opts := range []Options{{Shown: ShownBudget}, {Shown: ShownBudget, HeadBytes: 20000}, {Shown: ShownBudget, HeadBytes: 100, TailBytes: 100}, {}} {
		f := Footer{ID: "out_x", Complete: true}
		want := Render(data, opts, f)
		f.Errors = present.ScanErrors(data, HeadFrom(opts))
		if got := Render(data, opts, f); got != want {
			t.Errorf("%+v: with the lines found beforehand:\n%s\nsearched by the cut:\n%s", opts, footerOf(data, got), footerOf(data, want))
		}
	}
}

// HeadFrom is at or before the head's end for any data, random bytes
// (each shown as three) included, so that the search made while the copy
// is saved serves the cut.
func TestHeadFromBinary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	data := make([]byte, 1<<20)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	text := bytes.Repeat([]byte("a line of text\n"), 1<<16)
	for _, d := range [][]byte{data, text} {
		for _, opts := range []Options{{Shown: ShownBudget}, {Shown: 4 << 10}, {Shown: 512}, {Shown: ShownBudget, HeadBytes: 20000}, {Shown: ShownBudget, HeadBytes: 100, TailBytes: 100}, {}} {
			p := Render(d, opts, Footer{ID: "out_x", Complete: true})
			if from := HeadFrom(opts); from > p.HeadEnd {
				t.Errorf("%+v: HeadFrom %d past the head's end %d", opts, from, p.HeadEnd)
			}
		}
	}
}

// Lines found beforehand that cannot tell (from after the head's end, or
// a search cut short before the tail) are not used: the cut searches.
func TestFooterErrorScanFallback(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 3000; i++ {
		if i%100 == 0 {
			fmt.Fprintf(&b, "error %d\n", i)
		} else {
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	data := []byte(b.String())
	f := Footer{ID: "out_x", Complete: true}
	want := Render(data, Options{Shown: ShownBudget}, f)
	for _, scan := range []*present.ErrorScan{
		{From: 20000, Lines: []present.ErrorLine{{Line: 9, Offset: 20001, Text: "made up"}}},
		{From: 0, Lines: make([]present.ErrorLine, 40)},
	} {
		f.Errors = scan
		if got := Render(data, Options{Shown: ShownBudget}, f); got != want {
			t.Errorf("scan from %d: used lines that cannot tell:\n%s", scan.From, footerOf(data, got))
		}
	}
}

func TestPrefersLineEnds(t *testing.T) {
	// Lines of 100 bytes: a newline is always near, so both cuts fall on
	// line starts.
	data := bytes.Repeat(append(bytes.Repeat([]byte("q"), 99), '\n'), 1000)
	p := Render(data, Options{Budget: 2000}, Footer{ID: "out_x"})
	check(t, data, 2000, Footer{ID: "out_x"}, p)
	if p.HeadEnd%100 != 0 || p.TailStart%100 != 0 {
		t.Errorf("HeadEnd %d, TailStart %d: want both after a newline", p.HeadEnd, p.TailStart)
	}
	// Lines longer than the parts: cuts fall mid-line, as near the budget
	// as the characters allow.
	long := bytes.Repeat([]byte("é"), 5000)
	data = append(append(append([]byte{}, long...), '\n'), long...)
	p = Render(data, Options{Budget: 2000}, Footer{ID: "out_x"})
	check(t, data, 2000, Footer{ID: "out_x"}, p)
	if len(p.Text) < 2000-slackMargin-10 {
		t.Errorf("Text %d bytes: a mid-line cut should fill the budget", len(p.Text))
	}
}

func TestInvalidBytesStayInBudget(t *testing.T) {
	for _, data := range [][]byte{
		bytes.Repeat([]byte{0xff}, 50000),
		bytes.Repeat([]byte("\xe2\x82"), 30000),
		bytes.Repeat([]byte("a\xf0\x9f\x98"), 20000),
		append(bytes.Repeat([]byte("x"), 40000), bytes.Repeat([]byte{0x80}, 20000)...),
	} {
		for _, budget := range []int{100, 1000, Budget} {
			f := Footer{ID: "out_x", Complete: true}
			check(t, data, budget, f, Render(data, Options{Budget: budget}, f))
		}
	}
}

func TestTinyBudgets(t *testing.T) {
	data := numbered(300)
	for _, f := range []Footer{{ID: "out_abcdefghijklmnopqrstuvwxyz"}, {Unavailable: "disk full"}} {
		levels := map[string]bool{}
		for budget := 1; budget <= 2000; budget++ {
			p := Render(data, Options{Budget: budget}, f)
			check(t, data, budget, f, p)
			foot := strings.TrimPrefix(footerOf(data, p), "\n")
			switch {
			case foot == "":
				levels["none"] = true
			case strings.Count(foot, "\n") > 1:
				levels["full"] = true
			case strings.Contains(foot, "not shown"):
				levels["short"] = true
			default:
				levels["tiny"] = true
			}
		}
		if len(levels) != 4 {
			t.Errorf("footer %+v: levels seen %v, want none, tiny, short and full", f, levels)
		}
	}
}

func TestHugeSingleLine(t *testing.T) {
	data := bytes.Repeat([]byte("€"), 20<<20/3) // 20 MiB, one line, no newline
	f := Footer{ID: "out_x", Complete: false}
	p := Render(data, Options{}, f)
	check(t, data, Budget, f, p)
	if p.TotalLines != 1 || p.HeadLines != 1 || p.TailLines != 1 || p.OmittedLines != 0 {
		t.Errorf("lines %+v, want one line cut in the middle", p)
	}
	if !strings.Contains(p.Text, "(cut mid-line)") || !strings.Contains(p.Text, "(from mid-line)") {
		t.Errorf("footer does not say the cuts are mid-line:\n%s", footerOf(data, p))
	}
}

func TestFooterStringsAreCleaned(t *testing.T) {
	data := numbered(2000)
	f := Footer{
		ID:          "out_\"q\\\x01",
		Complete:    true,
		Status:      "exit status 2\nand more\xff.",
		Unavailable: "ignored when an id is given",
	}
	p := Render(data, Options{}, f)
	check(t, data, Budget, Footer{ID: f.ID}, p)
	foot := footerOf(data, p)
	if !strings.Contains(foot, "Status: exit status 2 and more\uFFFD.\n") {
		t.Errorf("status not on one line:\n%s", foot)
	}
	if strings.Contains(foot, "ignored") {
		t.Errorf("Unavailable shown although a copy was saved:\n%s", foot)
	}
	long := Footer{Unavailable: strings.Repeat("why ", 10000)}
	p = Render(data, Options{}, long)
	check(t, data, Budget, long, p)
	if foot := footerOf(data, p); len(foot) > 1000 {
		t.Errorf("a long reason makes a %d-byte footer", len(foot))
	}
	huge := Footer{ID: strings.Repeat("i", 100000)}
	p = Render(data, Options{}, huge)
	check(t, data, Budget, huge, p)
}

func TestHistory(t *testing.T) {
	data := numbered(5000)
	f := Footer{ID: "out_h", Complete: true}
	p := History(data, f)
	checkShown(t, data, HistoryBudget, ShownBudget, f, p)
	if !p.Truncated || len(p.Text) > ShownBudget {
		t.Errorf("History of a retained result is %d bytes, want at most %d", len(p.Text), ShownBudget)
	}
	p = History(data, Footer{Unavailable: "disk full"})
	check(t, data, HistoryBudget, Footer{Unavailable: "disk full"}, p)
	if len(p.Text) <= Budget {
		t.Errorf("History text with no copy is %d bytes, want the 32 KiB history budget used", len(p.Text))
	}
	small := []byte("fits\n")
	if p := History(small, f); p.Truncated || p.Text != "fits\n" {
		t.Errorf("History(small) = %+v", p)
	}
}

type failReader struct{ err error }

func (r failReader) ReadAt(p []byte, off int64) (int, error) { return 0, r.err }

type countingReader struct {
	r    io.ReaderAt
	read int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.read += int64(n)
	return n, err
}

func TestRenderAt(t *testing.T) {
	inputs := [][]byte{
		nil,
		[]byte("short\n"),
		numbered(10),
		numbered(4000),
		bytes.Repeat([]byte("é\xff"), 30000),
		bytes.Repeat([]byte("x"), 3000),
	}
	f := Footer{ID: "out_x", Complete: true}
	for i, data := range inputs {
		for _, budget := range []int{100, 3000, 0} {
			want := Render(data, Options{Budget: budget}, f)
			for _, lines := range []int64{-1, countLines(data)} {
				cr := &countingReader{r: bytes.NewReader(data)}
				got, err := RenderAt(cr, int64(len(data)), lines, Options{Budget: budget}, f)
				if err != nil {
					t.Fatalf("input %d budget %d lines %d: %v", i, budget, lines, err)
				}
				if got != want {
					t.Fatalf("input %d budget %d lines %d: RenderAt = %+v\nRender = %+v", i, budget, lines, got, want)
				}
				if b := budgetOf(Options{Budget: budget}); lines >= 0 && cr.read > int64(2*window(b)) {
					t.Errorf("input %d: read %d bytes with the line count known", i, cr.read)
				}
			}
		}
	}

	data := numbered(4000)
	size := int64(len(data))
	errTests := []struct {
		name  string
		r     io.ReaderAt
		size  int64
		lines int64
		want  error
	}{
		{"negative size", bytes.NewReader(data), -1, -1, ErrSize},
		{"more lines than bytes", bytes.NewReader(data), size, size + 1, ErrLines},
		{"no lines", bytes.NewReader(data), size, 0, ErrLines},
		{"too few lines", bytes.NewReader(data), size, 3, ErrLines},
		{"wrong lines, small", bytes.NewReader([]byte("a\nb\n")), 4, 3, ErrLines},
		{"size past the data", bytes.NewReader(data), size + 10, -1, ErrRead},
		{"size past small data", bytes.NewReader([]byte("ab")), 5, -1, ErrRead},
		{"failing reader", failReader{errors.New("disk on fire")}, size, -1, ErrRead},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RenderAt(tt.r, tt.size, tt.lines, Options{}, f)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			var e *Error
			if !errors.As(err, &e) || !strings.HasPrefix(err.Error(), "preview: ") {
				t.Errorf("err %q is not a *Error prefixed with the package name", err)
			}
		})
	}
	_, err := RenderAt(failReader{io.ErrClosedPipe}, size, -1, Options{}, f)
	if !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("err = %v: the reader's error is not wrapped", err)
	}
}

// FuzzRender checks, for any data, budget, split and footer:
//   - Text is valid UTF-8 and len(Text) <= budget (footer and the U+FFFD
//     growth of invalid bytes included);
//   - when the data's valid form fits the budget, Text is exactly that and
//     nothing is marked truncated;
//   - otherwise 0 <= HeadEnd <= TailStart <= len(data), both are character
//     boundaries of data under the left-to-right rule, Text starts with the
//     valid form of data[:HeadEnd] and ends with that of data[TailStart:];
//   - OmittedBytes, HeadLines, TailLines, OmittedLines and TotalLines equal
//     what a naive count of the lines finds;
//   - the footer states the omitted bytes and either the exact continuing
//     call (id, offset HeadEnd, valid JSON) or that no copy was saved;
//     with no footer there is no tail;
//   - RenderAt over the same bytes returns the same preview.
func FuzzRender(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), uint16(8), int16(0), int16(0), "out_x", true, "")
	f.Add(bytes.Repeat([]byte("é\n"), 500), uint16(300), int16(0), int16(0), "out_x", false, "")
	f.Add(bytes.Repeat([]byte{0xff, 'a', 0xe2, 0x82}, 300), uint16(200), int16(10), int16(-1), "", false, "disk full")
	f.Add(bytes.Repeat([]byte("🙂"), 400), uint16(500), int16(-1), int16(0), "id\"", true, "")
	f.Fuzz(func(t *testing.T, data []byte, budget uint16, head, tail int16, id string, complete bool, why string) {
		ft := Footer{ID: id, Complete: complete, Unavailable: why, Status: "exit status 1"}
		opts := Options{Budget: int(budget), HeadBytes: int(head), TailBytes: int(tail)}
		if budget%3 == 1 {
			opts.Shown = int(budget) / 3 // a retained result's smaller shown size
		}
		p := Render(data, opts, ft)
		shown := int(budget)
		if opts.Shown > 0 && head <= 0 && tail <= 0 {
			shown = opts.Shown // no parts asked: the shown size holds
		}
		checkShown(t, data, int(budget), shown, ft, p)
		q, err := RenderAt(bytes.NewReader(data), int64(len(data)), -1, opts, ft)
		if err != nil || q != p {
			t.Fatalf("RenderAt = %+v, %v; Render = %+v", q, err, p)
		}
	})
}

func BenchmarkRender8MiB(b *testing.B) {
	data := logCopy()
	f := Footer{ID: "out_abcdefghijklmnopqrstuvwxyz", Complete: true}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		Render(data, Options{}, f)
	}
}

func BenchmarkRenderAt8MiBKnownLines(b *testing.B) {
	data := logCopy()
	lines := countLines(data)
	r := bytes.NewReader(data)
	f := Footer{ID: "out_abcdefghijklmnopqrstuvwxyz", Complete: true}
	for b.Loop() {
		if _, err := RenderAt(r, int64(len(data)), lines, Options{}, f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderSmall(b *testing.B) {
	data := []byte("total 12\n-rw-r--r-- 1 user user 1024 Jan  1 00:00 go.mod\n")
	for b.Loop() {
		Render(data, Options{}, Footer{})
	}
}

func BenchmarkRenderJustOver(b *testing.B) {
	data := numbered(700) // a little over 24 KiB
	f := Footer{ID: "out_abcdefghijklmnopqrstuvwxyz", Complete: true}
	for b.Loop() {
		Render(data, Options{}, f)
	}
}

// logCopy returns 8 MiB of log lines, the copy cap's worth.
func logCopy() []byte {
	line := []byte("2024-01-01T00:00:00Z INFO request handled path=/api/v1/items status=200 ms=12\n")
	return bytes.Repeat(line, (8<<20)/len(line)+1)[:8<<20]
}

// TestFooterOutline: a JSON copy's outline goes into the full footer under
// a line naming query_tool_output, cleaned and within OutlineBytes; it is
// left out when nothing was saved or the budget allows only a short footer.
func TestFooterOutline(t *testing.T) {
	data := []byte(strings.Repeat(`{"a":1}`+"\n", 20000))
	outline := "JSON object of 2 keys, 99 bytes:\n  .items: array of 3, at 9, 50 bytes\n  .bad\x01key: null, at 70, 4 bytes\n"
	p := Render(data, Options{}, Footer{ID: "out_x", Complete: true, Outline: outline})
	for _, want := range []string{
		`query_tool_output {"id":"out_x","filter":".key"}`,
		"\nJSON object of 2 keys, 99 bytes:\n  .items: array of 3, at 9, 50 bytes\n  .bad key: null, at 70, 4 bytes\n",
	} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("footer lacks %q:\n%s", want, p.Text[p.HeadEnd:min(len(p.Text), int(p.HeadEnd)+2000)])
		}
	}
	if len(p.Text) > Budget {
		t.Errorf("preview of %d bytes", len(p.Text))
	}
	huge := strings.Repeat("  .k: number, at 1, 1 byte\n", 200)
	p = Render(data, Options{}, Footer{ID: "out_x", Complete: true, Outline: huge})
	if i := strings.Index(p.Text, "  .k: number"); i < 0 || strings.Count(p.Text, "  .k: number") > OutlineBytes/len("  .k: number, at 1, 1 byte\n") {
		t.Errorf("outline not cut to %d bytes: %d lines", OutlineBytes, strings.Count(p.Text, "  .k: number"))
	}
	for name, f := range map[string]Footer{
		"not saved":    {Unavailable: "disk full", Outline: outline},
		"short footer": {ID: "out_x", Outline: outline},
	} {
		budget := Budget
		if name == "short footer" {
			budget = 400
		}
		if p := Render(data, Options{Budget: budget}, f); strings.Contains(p.Text, "query_tool_output") || strings.Contains(p.Text, ".items") {
			t.Errorf("%s: outline shown:\n%s", name, p.Text)
		}
	}
}

// The full footer offers both the read that continues and the search,
// each an exact call.
func TestFooterOffersReadAndSearch(t *testing.T) {
	data := numbered(7000)
	p := Render(data, Options{}, Footer{ID: "out_abc", Complete: true})
	want := fmt.Sprintf(`Read on: read_tool_output {"id":"out_abc","offset":%d}; search: grep_tool_output {"id":"out_abc","pattern":"<RE2>"}.`, p.HeadEnd)
	if foot := footerOf(data, p); !strings.Contains(foot, want) {
		t.Errorf("footer lacks %q:\n%s", want, foot)
	}
}

// A small shown size keeps the footer whole: its counts, the way to the
// copy that holds the whole output and the error-like lines not shown come
// before the head and tail, which share what the footer leaves (at least an
// eighth of the preview). Before 2026-12-04 the footer had 3/8 of it, and
// below 4 KiB it fell to a one-line form without the pointer.
func TestFooterFirst(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 20000; i++ {
		if i == 15000 {
			fmt.Fprintf(&b, "row %d: ERROR: ledger %d does not balance\n", i, i)
			continue
		}
		fmt.Fprintf(&b, "row %d: the quick brown fox jumps over the lazy dog\n", i)
	}
	data := []byte(b.String())
	f := Footer{ID: "out_wrapper0123456789abcdef", Complete: true, Status: "exit status 1",
		Whole: []present.WholeCopy{{ID: "out_whole0123456789abcdefghi", Call: 1, Tool: "run_command", Command: "./export --all"}}}
	for _, shown := range []int{1536, ShownBudget, 4096} {
		p := Render(data, Options{Shown: shown}, f)
		checkShown(t, data, Budget, shown, f, p)
		foot := footerOf(data, p)
		for _, want := range []string{"is copy out_whole0123456789abcdefghi", "Status: exit status 1", "\n  15000:", present.Rule} {
			if !strings.Contains(foot, want) {
				t.Errorf("shown %d: the footer lacks %q:\n%s", shown, want, foot)
			}
		}
		if shown := int64(shown); p.HeadEnd+int64(len(data))-p.TailStart < shown/8-64 || p.HeadEnd == 0 || p.TailStart == int64(len(data)) {
			t.Errorf("shown %d: head %d and tail %d bytes, want an eighth of it at least", shown, p.HeadEnd, int64(len(data))-p.TailStart)
		}
	}
	// Where the footer needs no more than its default room, the split is
	// the default one.
	small := Footer{ID: "out_x", Complete: true}
	p := Render(bytes.Repeat([]byte("z"), 100000), Options{Shown: ShownBudget}, small)
	if p.HeadEnd != ShownHead || 100000-p.TailStart != ShownTail {
		t.Errorf("head %d, tail %d: want the default %d and %d", p.HeadEnd, 100000-p.TailStart, ShownHead, ShownTail)
	}
}

// A footer with no copy behind it lists the error-like lines not shown,
// which the cut searched for: with nothing to read back, they are the only
// words of the middle the model gets. Offsets, which nothing could read,
// are left out. Before, the lines were searched and then dropped.
func TestFooterNotSavedListsErrors(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		if i == 2500 {
			fmt.Fprintf(&b, "row %d: FATAL: ledger does not balance\n", i)
			continue
		}
		fmt.Fprintf(&b, "row %d: fine\n", i)
	}
	data := []byte(b.String())
	p := Render(data, Options{}, Footer{Unavailable: "disk full"})
	foot := footerOf(data, p)
	if !strings.Contains(foot, "cannot be read back.\nError-like lines not shown:\n  line 2500: row 2500: FATAL: ledger does not balance\nNarrow the source instead") || strings.Contains(foot, "(offset") {
		t.Errorf("footer:\n%s", foot)
	}
	if !strings.HasSuffix(foot, "]\n") || !strings.Contains(foot, "not saved") {
		t.Errorf("footer does not end its bracket or say it was not saved:\n%s", foot)
	}

	// A window of a long line says it is one, as the saved footer does.
	b.Reset()
	for i := 1; i <= 5000; i++ {
		if i == 2500 {
			fmt.Fprintf(&b, "%s FATAL: ledger does not balance %s\n", strings.Repeat("x", 400), strings.Repeat("y", 400))
			continue
		}
		fmt.Fprintf(&b, "row %d: fine\n", i)
	}
	data = []byte(b.String())
	foot = footerOf(data, Render(data, Options{}, Footer{Unavailable: "disk full"}))
	if !strings.Contains(foot, "  line 2500 (part of a longer line): ") || !strings.Contains(foot, "FATAL: ledger") {
		t.Errorf("a long line's window is not marked as part of a longer line:\n%s", foot)
	}
}

// At the default shown size, a log's footer lists all five error-like
// lines it has room for, each some 90 bytes, before the head and the tail
// (which keep an eighth of the preview): with the footer bound to 3/4 of
// it, the fifth was dropped.
func TestFooterFirstFiveErrors(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 50000; i++ {
		if i%400 == 0 {
			fmt.Fprintf(&b, "2026-11-02 03:14:07.000 ERROR billing-2 payment gateway timeout (request %d)\n", i/400)
			continue
		}
		fmt.Fprintf(&b, "2026-11-01 00:00:%02d.526 INFO  billing-6 synced batch %d in 468ms\n", i%60, i)
	}
	data := []byte(b.String())
	f := Footer{ID: "out_l62bfxxqevuoilsjp2oz5ugl2u", Complete: true}
	p := Render(data, Options{Shown: ShownBudget}, f)
	checkShown(t, data, Budget, ShownBudget, f, p)
	foot := footerOf(data, p)
	for n := 1; n <= 5; n++ {
		if want := fmt.Sprintf("payment gateway timeout (request %d)\n", n); !strings.Contains(foot, want) {
			t.Errorf("the footer lacks error line %d:\n%s", n, foot)
		}
	}
	if shown := int64(ShownBudget); p.HeadEnd+int64(len(data))-p.TailStart < shown/8-64 || p.HeadEnd == 0 || p.TailStart == int64(len(data)) {
		t.Errorf("head %d and tail %d bytes, want an eighth of %d at least", p.HeadEnd, int64(len(data))-p.TailStart, shown)
	}
}
