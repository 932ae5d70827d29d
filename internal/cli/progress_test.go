package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// TestProgressStatus: what the status line says of what a command wrote,
// however the writes fall: its latest non-blank line, a progress bar's
// latest state, no terminal escapes or control characters, cut to the
// terminal's width without splitting a character.
func TestProgressStatus(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writes []string
		cols   int
		want   string
	}{
		{"nothing yet", nil, 80, "scrollback run: 3s, 0 B, 0 lines"},
		{"a line being written", []string{"compiling"}, 80, "scrollback run: 3s, 9 B, 0 lines: compiling"},
		{"the latest whole line", []string{"one\ntwo\n"}, 80, "scrollback run: 3s, 8 B, 2 lines: two"},
		{"a line split across writes", []string{"ok  github.com/x", "/y 0.3s\n"}, 80, "scrollback run: 3s, 24 B, 1 lines: ok  github.com/x/y 0.3s"},
		{"the line being written wins once it has text", []string{"done\nnext"}, 80, "scrollback run: 3s, 9 B, 1 lines: next"},
		{"blank lines keep the one before", []string{"PASS\n\n  \n"}, 80, "scrollback run: 3s, 9 B, 3 lines: PASS"},
		{"a progress bar's latest state", []string{"  5%\r 40%\r 97%"}, 80, "scrollback run: 3s, 14 B, 0 lines: 97%"},
		{"CRLF line ends", []string{"first\r\nsecond\r\n"}, 80, "scrollback run: 3s, 15 B, 2 lines: second"},
		{"colours and control characters are dropped", []string{"\x1b[31mFAIL\x1b[0m\ttest\x07\x1b]0;title\x07 x\n"}, 80, "scrollback run: 3s, 32 B, 1 lines: FAIL test x"},
		{"invalid UTF-8 shows as U+FFFD", []string{"a\xffb\n"}, 80, "scrollback run: 3s, 4 B, 1 lines: a\uFFFDb"},
		{"cut to the width, less one column", []string{strings.Repeat("x", 100) + "\n"}, 50, "scrollback run: 3s, 101 B, 1 lines: " + strings.Repeat("x", 49-len("scrollback run: 3s, 101 B, 1 lines: "))},
		{"wide characters take two columns, none half shown", []string{"日本語のテキスト\n"}, 45, "scrollback run: 3s, 25 B, 1 lines: 日本語の"},
		{"unknown width: 80 columns", []string{strings.Repeat("y", 200)}, 0, "scrollback run: 3s, 200 B, 0 lines: " + strings.Repeat("y", 79-len("scrollback run: 3s, 200 B, 0 lines: "))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &progress{}
			for _, w := range tc.writes {
				if n, err := p.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			got := p.status(3*time.Second, tc.cols)
			if got != tc.want {
				t.Errorf("status:\n got %q\nwant %q", got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("status %q is not valid UTF-8", got)
			}
		})
	}
}

// TestProgressBounded: a line of any length keeps at most progressLineMax
// bytes, however it is written.
func TestProgressBounded(t *testing.T) {
	p := &progress{}
	chunk := bytes.Repeat([]byte("z"), 4096)
	for range 1000 {
		p.Write(chunk)
	}
	p.Write([]byte("\n"))
	for range 1000 {
		p.Write(chunk)
	}
	if len(p.partial) > progressLineMax || len(p.last) > progressLineMax || cap(p.partial) > 4*progressLineMax {
		t.Errorf("partial %d bytes (cap %d), last %d: want at most %d", len(p.partial), cap(p.partial), len(p.last), progressLineMax)
	}
	if p.bytes != 2000*4096+1 || p.lines != 1 {
		t.Errorf("counted %d bytes, %d lines", p.bytes, p.lines)
	}
}

func TestRunTimeAndSize(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 59*time.Second + 900*time.Millisecond: "59s", 125 * time.Second: "2m05s", 3720 * time.Second: "1h02m",
	} {
		if got := runTime(d); got != want {
			t.Errorf("runTime(%v) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1536: "1.5 KiB", 12 << 20: "12.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := sizeText(n); got != want {
			t.Errorf("sizeText(%d) = %q, want %q", n, got, want)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe for the drawing goroutine and the
// test together.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestProgressDrawsAndErases: once drawing, the line is redrawn in place
// (carriage return, text, erase to the end of the line); stop erases it
// and nothing is drawn after; a note written through before starts on a
// clean line.
func TestProgressDrawsAndErases(t *testing.T) {
	var out lockedBuffer
	p := &progress{out: &out, width: func() int { return 80 }, delay: 0, every: time.Millisecond}
	p.run()
	p.Write([]byte("building x\n"))
	for !strings.Contains(out.String(), "building x") {
		time.Sleep(time.Millisecond)
	}
	note := p.before(&out)
	note.Write([]byte("a note\n"))
	got := out.String()
	if !strings.HasPrefix(got, "\rscrollback run: ") || !strings.HasSuffix(got, "\r\x1b[Ka note\n") {
		t.Fatalf("terminal got %q", got)
	}
	p.Write([]byte("more\n"))
	p.stop()
	if after := out.String(); after != got {
		t.Errorf("drawn after stop: %q", after[len(got):])
	}
}

// TestProgressQuickCommand: a command that ends before the delay leaves
// nothing on the terminal.
func TestProgressQuickCommand(t *testing.T) {
	var out lockedBuffer
	p := &progress{out: &out, width: func() int { return 80 }, delay: time.Hour, every: time.Millisecond}
	p.run()
	p.Write([]byte("fast\n"))
	p.stop()
	p.stop()
	if got := out.String(); got != "" {
		t.Errorf("terminal got %q", got)
	}
}

// TestNewProgressOnlyOnATerminal: a pipe, a file or a dumb terminal gets
// no status line.
func TestNewProgressOnlyOnATerminal(t *testing.T) {
	env := func(string) string { return "xterm" }
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, stderr := range map[string]any{"file": f, "pipe": w, "buffer": &bytes.Buffer{}} {
		if p := newProgress(stderr.(interface{ Write([]byte) (int, error) }), env); p != nil {
			t.Errorf("%s: got a status line", name)
		}
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		defer tty.Close()
		if p := newProgress(tty, func(string) string { return "dumb" }); p != nil {
			t.Error("TERM=dumb: got a status line")
		}
		if p := newProgress(tty, env); p == nil {
			t.Error("a terminal got no status line")
		}
	}
}
