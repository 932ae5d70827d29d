package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/term"
	"golang.org/x/text/width"
)

// progress is `scrollback run`'s status line on a terminal. The command's
// output is captured, not shown, until it ends: a person who ran
// `scrollback run -- make test` would otherwise face a silent terminal for
// as long as the tests take. So while the command runs, one line on stderr,
// redrawn a few times a second once the command has run progressDelay,
// says how long it has run, how much it has written and its latest line;
// the line is erased before anything else is written to the terminal.
// Only a terminal gets it (see newProgress): stdout and, when stderr is
// a pipe or a file, stderr are what they were.
//
// progress is the command's Output (scrollback.RunCommandInput): Write
// counts what the command writes and keeps its latest line.
type progress struct {
	out   io.Writer
	width func() int    // the terminal's columns; 0 when unknown
	delay time.Duration // before the first line (progressDelay)
	every time.Duration // between lines (progressEvery)
	start time.Time

	mu      sync.Mutex
	bytes   int64
	lines   int64
	last    []byte // the latest non-empty line, at most progressLineMax bytes
	partial []byte // the line being written, at most progressLineMax bytes
	drawn   string // the status line on the terminal, "" when none is
	done    bool   // stopped: nothing more is drawn

	stopOnce sync.Once
	quit     chan struct{}
	exited   chan struct{}
}

const (
	// progressDelay: a command that ends sooner shows no status line, so
	// that short commands do not flicker.
	progressDelay = time.Second
	// progressEvery is how often the line is redrawn.
	progressEvery = 200 * time.Millisecond
	// progressLineMax bounds the latest line kept: wider than any
	// terminal shows.
	progressLineMax = 1024
)

// newProgress returns a status line drawn on stderr when stderr is a
// terminal that can erase a line (TERM is not "dumb"), else nil.
func newProgress(stderr io.Writer, getenv func(string) string) *progress {
	f, ok := stderr.(*os.File)
	if !ok || f == nil || !term.IsTerminal(int(f.Fd())) || getenv("TERM") == "dumb" {
		return nil
	}
	fd := int(f.Fd())
	return &progress{out: f, delay: progressDelay, every: progressEvery, width: func() int {
		w, _, err := term.GetSize(fd)
		if err != nil {
			return 0
		}
		return w
	}}
}

// Write counts b and keeps the latest line. A carriage return ends a line
// as a newline does: a command's own progress bar shows its latest state.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.bytes += int64(len(b))
	p.lines += int64(bytes.Count(b, []byte{'\n'}))
	n := len(b)
	if i := bytes.LastIndexAny(b, "\r\n"); i >= 0 {
		// b ends lines: the latest that is not blank is kept. Each began
		// in b but the first, which began in partial.
		for ended := b[:i]; ; {
			j := bytes.LastIndexAny(ended, "\r\n")
			if j < 0 {
				p.partial = appendMax(p.partial, ended)
				p.keepLast(p.partial)
				break
			}
			if l := ended[j+1:]; len(bytes.TrimSpace(l)) > 0 {
				p.keepLast(l)
				break
			}
			ended = ended[:j]
		}
		p.partial = p.partial[:0]
		b = b[i+1:]
	}
	p.partial = appendMax(p.partial, b)
	return n, nil
}

// appendMax appends to l what of b fits in progressLineMax bytes.
func appendMax(l, b []byte) []byte {
	return append(l, b[:min(len(b), max(progressLineMax-len(l), 0))]...)
}

// keepLast keeps l as the latest line unless it is blank: a blank line
// says less than the one before it.
func (p *progress) keepLast(l []byte) {
	if len(bytes.TrimSpace(l)) > 0 {
		p.last = appendMax(p.last[:0], l)
	}
}

// run draws the line until stop is called.
func (p *progress) run() {
	p.start = time.Now()
	p.quit, p.exited = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(p.exited)
		delay := time.NewTimer(p.delay)
		defer delay.Stop()
		select {
		case <-delay.C:
		case <-p.quit:
			return
		}
		tick := time.NewTicker(p.every)
		defer tick.Stop()
		for {
			p.draw(time.Since(p.start))
			select {
			case <-tick.C:
			case <-p.quit:
				return
			}
		}
	}()
}

// draw writes the status line over the one before, unless it would say
// the same.
func (p *progress) draw(elapsed time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	line := p.status(elapsed, p.width())
	if p.done || line == p.drawn {
		return
	}
	fmt.Fprintf(p.out, "\r%s\x1b[K", line)
	p.drawn = line
}

// status is the line's text, at most cols-1 columns wide (a full last
// column would wrap on some terminals): the time the command has run,
// what it has written and its latest line. p.mu is held.
func (p *progress) status(elapsed time.Duration, cols int) string {
	if cols <= 0 {
		cols = 80
	}
	s := fmt.Sprintf("scrollback run: %s, %s, %d lines", runTime(elapsed), sizeText(p.bytes), p.lines)
	last := p.partial
	if len(bytes.TrimSpace(last)) == 0 {
		last = p.last
	}
	if l := cleanLine(last); l != "" {
		s += ": " + l
	}
	return cutColumns(s, cols-1)
}

// stop ends the line: it is erased, and nothing more is drawn. It may be
// called more than once, and before run.
func (p *progress) stop() {
	if p == nil {
		return
	}
	p.stopOnce.Do(func() {
		if p.quit != nil {
			close(p.quit)
			<-p.exited
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.done = true
		if p.drawn != "" {
			io.WriteString(p.out, "\r\x1b[K")
		}
	})
}

// before returns w, which stops p before each write to it: a note said
// while the line is up (a save waiting for the database) starts on a
// clean line.
func (p *progress) before(w io.Writer) io.Writer {
	if p == nil {
		return w
	}
	return stopFirst{p, w}
}

type stopFirst struct {
	p *progress
	w io.Writer
}

func (s stopFirst) Write(b []byte) (int, error) {
	s.p.stop()
	return s.w.Write(b)
}

// runTime is d as the status line says it: 9s, 2m05s, 1h02m.
func runTime(d time.Duration) string {
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
}

// sizeText is n bytes as the status line says it: 900 B, 1.4 KiB, 12.0 MiB.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// cleanLine is l as the status line may show it: valid UTF-8, without
// the terminal escapes a command's colours are written with (ESC [ ...
// letter) and with every other control character a space, trimmed.
func cleanLine(l []byte) string {
	var b strings.Builder
	for len(l) > 0 {
		if l[0] == 0x1b {
			l = l[escapeLen(l):]
			continue
		}
		r, size := utf8.DecodeRune(l)
		l = l[size:]
		switch {
		case r == utf8.RuneError && size == 1:
			r = '\uFFFD'
		case r == '\t':
			r = ' '
		case unicode.IsControl(r):
			continue
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// escapeLen is the length of the escape sequence l starts with (l[0] is
// ESC): a CSI sequence (ESC [ parameters, a final byte from @ to ~), an
// OSC one (ESC ], to BEL or ESC \), or ESC and one byte.
func escapeLen(l []byte) int {
	if len(l) < 2 {
		return len(l)
	}
	switch l[1] {
	case '[':
		for i := 2; i < len(l); i++ {
			if l[i] >= 0x40 && l[i] <= 0x7e {
				return i + 1
			}
		}
		return len(l)
	case ']':
		for i := 2; i < len(l); i++ {
			if l[i] == 0x07 {
				return i + 1
			}
			if l[i] == 0x1b && i+1 < len(l) && l[i+1] == '\\' {
				return i + 2
			}
		}
		return len(l)
	}
	return 2
}

// cutColumns is s cut to at most cols terminal columns: East Asian wide
// and full-width characters take two, combining marks none.
func cutColumns(s string, cols int) string {
	used := 0
	for i, r := range s {
		w := 1
		switch {
		case unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r):
			w = 0
		case wide(r):
			w = 2
		}
		if used+w > cols {
			return s[:i]
		}
		used += w
	}
	return s
}

// wide reports whether r takes two terminal columns.
func wide(r rune) bool {
	k := width.LookupRune(r).Kind()
	return k == width.EastAsianWide || k == width.EastAsianFullwidth
}
