package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// write is one Write call on one stream.
type write struct {
	stream int
	data   string
}

func run(l Limits, ws []write) (*Capture, Result) {
	c := New(l)
	for _, w := range ws {
		dst := c.Stdout()
		if w.stream == stderr {
			dst = c.Stderr()
		}
		dst.Write([]byte(w.data))
	}
	return c, c.Result()
}

func TestSmallOutputIsWhole(t *testing.T) {
	const cp = 1024
	tests := []struct {
		name   string
		writes []write
		want   string
	}{
		{"nothing", nil, ""},
		{"empty writes", []write{{stdout, ""}, {stderr, ""}}, ""},
		{"one line", []write{{stdout, "hello\n"}}, "hello\n"},
		{"interleaved streams keep arrival order", []write{
			{stdout, "out 1\n"}, {stderr, "err 1\n"}, {stdout, "out 2"}, {stderr, "err 2\n"}, {stdout, "\n"},
		}, "out 1\nerr 1\nout 2err 2\n\n"},
		{"invalid UTF-8 and NUL pass through", []write{
			{stdout, "a\x00b\xff\xfe"}, {stderr, "\xe2\x82"}, {stdout, "\xac\xc0\x80\n"},
		}, "a\x00b\xff\xfe\xe2\x82\xac\xc0\x80\n"},
		{"exactly the copy cap", []write{{stdout, strings.Repeat("x", cp-1)}, {stderr, "\n"}},
			strings.Repeat("x", cp-1) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r := run(Limits{Copy: cp}, tt.writes)
			if string(r.Copy) != tt.want {
				t.Errorf("Copy = %q, want %q", r.Copy, tt.want)
			}
			if !r.Complete || r.Gap != nil {
				t.Errorf("Complete = %v, Gap = %v; want true, nil", r.Complete, r.Gap)
			}
			var out, errb int64
			for _, w := range tt.writes {
				if w.stream == stderr {
					errb += int64(len(w.data))
				} else {
					out += int64(len(w.data))
				}
			}
			if r.StdoutBytes != out || r.StderrBytes != errb {
				t.Errorf("StdoutBytes, StderrBytes = %d, %d; want %d, %d", r.StdoutBytes, r.StderrBytes, out, errb)
			}
		})
	}
}

func TestNoAllocationForSmallOutput(t *testing.T) {
	c := New(Limits{})
	c.Stdout().Write([]byte("hi\n"))
	if got := cap(c.buf); got > 64<<10 {
		t.Errorf("a 3-byte output grew the buffer to %d bytes", got)
	}
}

// lines returns n numbered lines "line 0000001\n"...
func lines(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "line %07d\n", i)
	}
	return b.String()
}

func TestOverflow(t *testing.T) {
	const cp = 2048
	l := Limits{Copy: cp, Tail: 512}
	tests := []struct {
		name      string
		limits    Limits
		writes    []write
		wantHead  string // the copy starts with this
		wantTail  string // and ends with this
		wantCause string
	}{
		{
			name:      "one byte over the copy cap",
			limits:    l,
			writes:    []write{{stdout, strings.Repeat("a", cp)}, {stdout, "b"}},
			wantTail:  "aab",
			wantCause: "copy",
		},
		{
			name:      "lines: head ends and tail starts at a line",
			limits:    l,
			writes:    []write{{stdout, lines(0, 1000)}},
			wantHead:  "line 0000000\n",
			wantTail:  "line 0000999\n",
			wantCause: "copy",
		},
		{
			name:      "stdout cap ends the head for both streams",
			limits:    Limits{Copy: cp, Tail: 100, Stdout: 50},
			writes:    []write{{stdout, strings.Repeat("o", 40)}, {stdout, strings.Repeat("p", 300)}, {stderr, "late error\n"}},
			wantHead:  strings.Repeat("o", 40) + strings.Repeat("p", 10) + "\n[scrollback: ",
			wantTail:  "late error\n",
			wantCause: "stdout",
		},
		{
			name:      "stderr cap",
			limits:    Limits{Copy: cp, Tail: 100, Stderr: 10},
			writes:    []write{{stderr, lines(0, 100)}, {stdout, "done\n"}},
			wantHead:  "line 00000\n[scrollback: ", // no line end near: the head keeps its 10 bytes
			wantTail:  "line 0000099\ndone\n",
			wantCause: "stderr",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, r := run(tt.limits, tt.writes)
			var all []byte
			for _, w := range tt.writes {
				all = append(all, w.data...)
			}
			checkGap(t, c.Limits(), all, r)
			if !bytes.HasPrefix(r.Copy, []byte(tt.wantHead)) {
				t.Errorf("copy starts %q, want %q", r.Copy[:min(len(r.Copy), 80)], tt.wantHead)
			}
			if !bytes.HasSuffix(r.Copy, []byte(tt.wantTail)) {
				t.Errorf("copy ends %q, want %q", r.Copy[max(0, len(r.Copy)-80):], tt.wantTail)
			}
			m := r.Copy[r.Gap.Offset:]
			if want := "the " + tt.wantCause + " cap of "; !bytes.Contains(m[:bytes.IndexByte(m[1:], '\n')+1], []byte(want)) {
				t.Errorf("marker %q does not name %q", m[:bytes.IndexByte(m[1:], '\n')+2], want)
			}
		})
	}
}

// checkGap checks a copy that dropped bytes against the whole output: the
// copy is a prefix, the exact marker and a suffix, within the cap, cut on
// character boundaries, with exact counts.
func checkGap(t *testing.T, l Limits, all []byte, r Result) {
	t.Helper()
	if r.Complete || r.Gap == nil {
		t.Fatalf("Complete = %v, Gap = %v; want false and a gap", r.Complete, r.Gap)
	}
	if int64(len(r.Copy)) > l.Copy {
		t.Fatalf("len(Copy) = %d > cap %d", len(r.Copy), l.Copy)
	}
	g := r.Gap
	head := r.Copy[:g.Offset]
	if !bytes.HasPrefix(all, head) {
		t.Fatalf("head (%d bytes) is not a prefix of the output", len(head))
	}
	lead := len(head) > 0 && head[len(head)-1] != '\n'
	// The tail is what follows the marker, whose text we know from the counts.
	var m []byte
	for _, cause := range []string{"copy", "stdout", "stderr"} {
		cand := marker(lead, g.Bytes, g.Lines, cause, capFor(l, cause))
		if bytes.HasPrefix(r.Copy[g.Offset:], cand) {
			m = cand
			break
		}
	}
	if m == nil {
		t.Fatalf("no marker line at offset %d: %q", g.Offset, r.Copy[g.Offset:min(int64(len(r.Copy)), g.Offset+160)])
	}
	// A reader of the copy tells the marker line by what it says.
	if pm, ok := ParseMarker(bytes.Trim(m, "\n")); !ok || pm.Bytes != g.Bytes || pm.Lines != g.Lines || pm.Limit != capFor(l, pm.Cap) {
		t.Fatalf("ParseMarker(%q) = %+v, %v; want the gap's counts and its cap", m, pm, ok)
	}
	if len(m) > MaxMarkerLen {
		t.Fatalf("marker of %d bytes, more than MaxMarkerLen (%d)", len(m), MaxMarkerLen)
	}
	tail := r.Copy[g.Offset+int64(len(m)):]
	if !bytes.HasSuffix(all, tail) {
		t.Fatalf("tail (%d bytes) is not a suffix of the output", len(tail))
	}
	if want := int64(len(all) - len(head) - len(tail)); g.Bytes != want || want <= 0 {
		t.Fatalf("Gap.Bytes = %d, want %d (> 0)", g.Bytes, want)
	}
	dropped := all[len(head) : len(all)-len(tail)]
	if want := int64(bytes.Count(dropped, newline)); g.Lines != want {
		t.Fatalf("Gap.Lines = %d, want %d", g.Lines, want)
	}
	if boundary(all, len(head)) == false {
		t.Fatalf("head ends inside a character at %d", len(head))
	}
	if boundary(all, len(all)-len(tail)) == false {
		t.Fatalf("tail starts inside a character at %d", len(all)-len(tail))
	}
}

func capFor(l Limits, cause string) int64 {
	switch cause {
	case "stdout":
		return l.Stdout
	case "stderr":
		return l.Stderr
	}
	return l.Copy
}

// boundary reports whether off is a character boundary of b.
func boundary(b []byte, off int) bool {
	lo := max(0, off-3)
	hi := min(len(b), off+3)
	in, _, _ := utf8x.Inside(b[lo:hi], off-lo)
	return !in
}

func TestMarkerCountsAreExact(t *testing.T) {
	// 4 KiB copy, 1 KiB tail; 100 000 lines of 13 bytes.
	l := Limits{Copy: 4096, Tail: 1024}
	c := New(l)
	text := lines(0, 100000)
	for i := 0; i < len(text); i += 777 { // writes that split lines
		c.Writer().Write([]byte(text[i:min(len(text), i+777)]))
	}
	r := c.Result()
	checkGap(t, c.Limits(), []byte(text), r)
	head := r.Copy[:r.Gap.Offset]
	if len(head)%13 != 0 {
		t.Errorf("head of %d bytes does not end at a line end", len(head))
	}
	// Whole lines were dropped, so the marker's line count is the number
	// of dropped lines, and the tail starts with the line after them.
	headLines := int64(len(head) / 13)
	wantTailStart := fmt.Sprintf("line %07d\n", headLines+r.Gap.Lines)
	rest := r.Copy[r.Gap.Offset:]
	rest = rest[bytes.IndexByte(rest, '\n')+1:]
	if !bytes.HasPrefix(rest, []byte(wantTailStart)) {
		t.Errorf("tail starts %q, want %q", rest[:min(len(rest), 20)], wantTailStart)
	}
	wantMarker := fmt.Sprintf("[scrollback: %d bytes (%d lines) dropped here: the copy cap of 4096 bytes was crossed]\n", r.Gap.Bytes, r.Gap.Lines)
	if got := string(r.Copy[r.Gap.Offset : r.Gap.Offset+int64(len(wantMarker))]); got != wantMarker {
		t.Errorf("marker = %q, want %q", got, wantMarker)
	}
}

func TestCutsOnCharacterBoundaries(t *testing.T) {
	// No newlines at all: the cuts must fall between characters.
	for _, s := range []string{"é", "€", "😀", "a€"} {
		t.Run(s, func(t *testing.T) {
			l := Limits{Copy: 1000, Tail: 301}
			text := []byte(strings.Repeat(s, 2000/len(s)+1))
			c := New(l)
			for i := 0; i < len(text); i += 7 {
				c.Stdout().Write(text[i:min(len(text), i+7)])
			}
			r := c.Result()
			checkGap(t, c.Limits(), text, r)
		})
	}
}

func TestLastLineOf150MiBSurvives(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 150 MiB")
	}
	c := New(Limits{})
	chunk := []byte(lines(0, 5000)) // 65 000 bytes, 5000 lines
	var total, nl int64
	for total < 150<<20 {
		c.Stdout().Write(chunk)
		total += int64(len(chunk))
		nl += 5000
	}
	last := []byte("TOTAL: all rows exported\n")
	c.Stdout().Write(last)
	total += int64(len(last))
	nl++
	r := c.Result()
	if !bytes.HasSuffix(r.Copy, last) {
		t.Fatalf("the last line did not survive: copy ends %q", r.Copy[len(r.Copy)-40:])
	}
	if len(r.Copy) > DefaultCopy || r.Complete || r.Gap == nil {
		t.Fatalf("len(Copy) = %d, Complete = %v, Gap = %v", len(r.Copy), r.Complete, r.Gap)
	}
	if r.StdoutBytes != total {
		t.Errorf("StdoutBytes = %d, want %d", r.StdoutBytes, total)
	}
	head := r.Copy[:r.Gap.Offset]
	tail := r.Copy[bytes.IndexByte(r.Copy[r.Gap.Offset:], '\n')+int(r.Gap.Offset)+1:]
	if got := int64(len(head)) + r.Gap.Bytes + int64(len(tail)); got != total {
		t.Errorf("head + dropped + tail = %d, want %d", got, total)
	}
	if got := int64(bytes.Count(head, newline)+bytes.Count(tail, newline)) + r.Gap.Lines; got != nl {
		t.Errorf("lines kept + dropped = %d, want %d", got, nl)
	}
	// The default split: about 6 MiB of head, 2 MiB of tail.
	if len(head) < 6<<20-8<<10 || len(tail) < 2<<20-8<<10 {
		t.Errorf("head %d, tail %d bytes: want about 6 MiB and 2 MiB", len(head), len(tail))
	}
}

func TestMemoryStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 200 MiB")
	}
	chunk := bytes.Repeat([]byte("0123456789abcdef\n"), 256<<10/17)
	c := New(Limits{})
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for written := 0; written < 200<<20; written += len(chunk) {
		c.Stdout().Write(chunk)
	}
	r := c.Result()
	runtime.ReadMemStats(&after)
	// The buffer grows by doubling up to the copy cap: at most 2x the cap
	// allocated in all, whatever is written.
	if got := after.TotalAlloc - before.TotalAlloc; got > 2*DefaultCopy+1<<20 {
		t.Errorf("writing 200 MiB allocated %d bytes, want <= %d", got, 2*DefaultCopy+1<<20)
	}
	if r.StdoutBytes != int64(200<<20/len(chunk)+1)*int64(len(chunk)) && r.StdoutBytes < 200<<20 {
		t.Errorf("StdoutBytes = %d", r.StdoutBytes)
	}

	// Past the cap, a write allocates nothing.
	c = New(Limits{Copy: 1 << 20})
	for i := 0; i < 10; i++ {
		c.Stdout().Write(chunk)
	}
	if n := testing.AllocsPerRun(100, func() { c.Stdout().Write(chunk); c.Stderr().Write(chunk[:100]) }); n != 0 {
		t.Errorf("a write past the cap made %v allocations, want 0", n)
	}
}

func TestConcurrentWritesStayTogether(t *testing.T) {
	c := New(Limits{})
	var wg sync.WaitGroup
	for s, w := range []io.Writer{c.Stdout(), c.Stderr()} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				fmt.Fprintf(w, "%d:%04d|", s, i)
			}
		}()
	}
	wg.Wait()
	r := c.Result()
	next := [2]int{}
	for _, rec := range strings.Split(strings.TrimSuffix(string(r.Copy), "|"), "|") {
		var s, i int
		if _, err := fmt.Sscanf(rec, "%d:%d", &s, &i); err != nil || len(rec) != 6 {
			t.Fatalf("record %q was split or mixed", rec)
		}
		if i != next[s] {
			t.Fatalf("stream %d: record %d came when %d was due", s, i, next[s])
		}
		next[s]++
	}
	if next != [2]int{2000, 2000} {
		t.Errorf("records per stream = %v, want 2000 each", next)
	}
	if r.StdoutBytes != 14000 || r.StderrBytes != 14000 {
		t.Errorf("counts = %d, %d; want 14000 each", r.StdoutBytes, r.StderrBytes)
	}
}

func TestStderrTail(t *testing.T) {
	long := strings.Repeat("é", 3000) // 6000 bytes
	tests := []struct {
		name   string
		writes []write
		want   string
	}{
		{"no stderr", []write{{stdout, "x"}}, ""},
		{"short stderr, stdout ignored", []write{{stderr, "e1\n"}, {stdout, "o\n"}, {stderr, "e2\n"}}, "e1\ne2\n"},
		{"long stderr starts on a boundary", []write{{stderr, long}},
			long[len(long)-StderrTailSize:]}, // 4096 is even: a boundary
		{"odd cut moves to the next character", []write{{stderr, long + "x"}},
			long[len(long)-StderrTailSize+2:] + "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, r := run(Limits{}, tt.writes)
			if string(r.StderrTail) != tt.want {
				t.Errorf("StderrTail = %q (%d bytes), want %d bytes", r.StderrTail, len(r.StderrTail), len(tt.want))
			}
		})
	}
}

func TestResultIsFinal(t *testing.T) {
	c := New(Limits{Copy: MinCopy})
	c.Stdout().Write(bytes.Repeat([]byte("ab\n"), 1000))
	r1 := c.Result()
	if n, err := c.Stderr().Write([]byte("late")); n != 0 || !errors.Is(err, ErrDone) {
		t.Errorf("Write after Result = %d, %v; want 0, ErrDone", n, err)
	}
	r2 := c.Result()
	if !bytes.Equal(r1.Copy, r2.Copy) || *r1.Gap != *r2.Gap || r2.StderrBytes != 0 {
		t.Errorf("a second Result differs: %+v vs %+v", r1, r2)
	}
}

func TestLimitsDefaults(t *testing.T) {
	reserve := int64(markerReserve)
	tests := []struct {
		in, want Limits
	}{
		{Limits{}, Limits{Stdout: 8 << 20, Stderr: 8 << 20, Copy: 8 << 20, Tail: 2 << 20}},
		{Limits{Stdout: -1, Copy: 1 << 20}, Limits{Stdout: 8 << 20, Stderr: 8 << 20, Copy: 1 << 20, Tail: 256 << 10}},
		{Limits{Copy: 10}, Limits{Stdout: 8 << 20, Stderr: 8 << 20, Copy: MinCopy, Tail: MinCopy / 4}},
		{Limits{Copy: 4096, Tail: 4096}, Limits{Stdout: 8 << 20, Stderr: 8 << 20, Copy: 4096, Tail: 4096 - reserve - tailContext}},
		{Limits{Stdout: 1, Stderr: 2, Copy: 3000, Tail: 1}, Limits{Stdout: 1, Stderr: 2, Copy: 3000, Tail: 1}},
	}
	for _, tt := range tests {
		if got := New(tt.in).Limits(); got != tt.want {
			t.Errorf("New(%+v).Limits() = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// FuzzSettled: whatever is written, in whatever pieces and to whichever
// stream, the copy Result returns starts with every prefix Settled gave
// along the way.
func FuzzSettled(f *testing.F) {
	f.Add([]byte("hello\nworld\n"), uint16(3), int64(600))
	f.Add(bytes.Repeat([]byte("line of text\n"), 400), uint16(97), int64(1024))
	f.Add(bytes.Repeat([]byte("ééé"), 700), uint16(5), int64(512))
	f.Fuzz(func(t *testing.T, data []byte, piece uint16, copyCap int64) {
		if piece == 0 {
			piece = 1
		}
		copyCap = MinCopy + (copyCap&0xffff)%4096
		c := New(Limits{Copy: copyCap, Stdout: copyCap / 2, Stderr: copyCap})
		var settled [][]byte
		for i := 0; i < len(data); i += int(piece) {
			p := data[i:min(i+int(piece), len(data))]
			w := c.Stdout()
			if i/int(piece)%3 == 2 {
				w = c.Stderr()
			}
			w.Write(p)
			s := c.Settled()
			settled = append(settled, append([]byte(nil), s...))
			if len(settled) > 1 && !bytes.HasPrefix(s, settled[len(settled)-2]) {
				t.Fatalf("Settled shrank or changed: %q then %q", settled[len(settled)-2], s)
			}
		}
		got := c.Result().Copy
		for _, s := range settled {
			if !bytes.HasPrefix(got, s) {
				t.Fatalf("copy %q does not start with settled %q", got, s)
			}
		}
	})
}

// TestParseMarker: ParseMarker reads back what marker writes, singular
// and plural, and refuses anything else.
func TestParseMarker(t *testing.T) {
	for _, c := range []struct {
		bytes, lines int64
		cause        string
		limit        int64
	}{
		{1, 0, "copy", 8 << 20},
		{123456789, 45678, "stdout", 1},
		{2, 1, "stderr", 512},
		{1<<63 - 1, 1<<63 - 1, "copy", 1<<63 - 1},
	} {
		for _, lead := range []bool{false, true} {
			m := marker(lead, c.bytes, c.lines, c.cause, c.limit)
			got, ok := ParseMarker(bytes.Trim(m, "\n"))
			if want := (Marker{Bytes: c.bytes, Lines: c.lines, Cap: c.cause, Limit: c.limit}); !ok || got != want {
				t.Errorf("ParseMarker(%q) = %+v, %v; want %+v", m, got, ok, want)
			}
		}
	}
	// A drop inside one line says so; copies saved before said "(0
	// lines)", and they still parse.
	within := string(bytes.Trim(marker(false, 7, 0, "copy", 100), "\n"))
	if !strings.Contains(within, "(within one line)") {
		t.Errorf("a drop without a newline: %q; want it said within one line", within)
	}
	for _, line := range []string{within, strings.Replace(within, "within one line", "0 lines", 1)} {
		if got, ok := ParseMarker([]byte(line)); !ok || got != (Marker{Bytes: 7, Cap: "copy", Limit: 100}) {
			t.Errorf("ParseMarker(%q) = %+v, %v", line, got, ok)
		}
	}
	good := string(bytes.Trim(marker(false, 10, 2, "copy", 100), "\n"))
	for _, line := range []string{
		"",
		"[scrollback: ",
		good[:len(good)-1],
		good + " ",
		" " + good,
		strings.Replace(good, "10 bytes", "1 bytes", 1),
		strings.Replace(good, "10 bytes", "-10 bytes", 1),
		strings.Replace(good, "10 bytes", "+10 bytes", 1),
		strings.Replace(good, "10 bytes", "010 bytes", 1),
		strings.Replace(good, "2 lines", "2 line", 1),
		strings.Replace(good, "2 lines", "within two lines", 1),
		strings.Replace(good, "copy cap", "disk cap", 1),
		strings.Replace(good, "100 bytes", "99999999999999999999 bytes", 1),
		"[scrollback: the command failed (exit status 2). The last 10 bytes it wrote to stderr come first; its output follows.]",
	} {
		if m, ok := ParseMarker([]byte(line)); ok {
			t.Errorf("ParseMarker(%q) = %+v, true; want false", line, m)
		}
	}
}

// TestWatch: the watch channel is signalled whenever the settled prefix
// passes another multiple of the step, and only then; signals the
// receiver has not taken merge into one; crossing a cap settles the head
// and signals too.
func TestWatch(t *testing.T) {
	c := New(Limits{Copy: 64 << 10, Tail: 4 << 10})
	ch := c.Watch(4096)
	signalled := func() bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	line := []byte(strings.Repeat("x", 99) + "\n")
	passed := 0
	for i := range 300 {
		c.Stdout().Write(line)
		k := len(c.Settled()) / 4096
		got := signalled()
		if want := k > passed; got != want {
			t.Fatalf("write %d: settled %d bytes (%d steps, %d signalled before): signal %v, want %v", i, len(c.Settled()), k, passed, got, want)
		}
		passed = k
	}
	// Many steps at once, untaken: one signal.
	c2 := New(Limits{})
	ch2 := c2.Watch(1024)
	for range 100 {
		c2.Stdout().Write(bytes.Repeat(line, 20))
	}
	if n := len(ch2); n != 1 {
		t.Errorf("%d signals waiting, want them merged into 1", n)
	}
	// Past the copy cap the head is final and settles at once.
	c3 := New(Limits{Copy: 16 << 10, Tail: 2 << 10})
	ch3 := c3.Watch(1 << 10)
	c3.Stdout().Write(bytes.Repeat(line, 200))
	if len(ch3) != 1 || len(c3.Settled()) < 8<<10 {
		t.Errorf("past the cap: %d signals, %d bytes settled; want a signal and the head settled", len(ch3), len(c3.Settled()))
	}
}
