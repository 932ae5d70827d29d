// Package capture keeps a bounded copy of what a command writes.
//
// A Capture takes a command's stdout and stderr through two io.Writers and
// merges them, in arrival order, into one retained copy of at most
// Limits.Copy bytes (8 MiB by default). Memory stays bounded whatever the
// command writes: a command that writes 10 GiB costs the same as one that
// writes 9 MiB.
//
// While the output fits, the copy is the output, byte for byte (invalid
// UTF-8 and NUL bytes included). Once a cap is crossed the capture keeps the
// first part of the output (the head) and, in a ring, its last Limits.Tail
// bytes (the tail, 2 MiB by default), so that a long export's trailing
// summary still survives. The copy is then
//
//	head + marker line + tail
//
// where the head ends at a line end when one is near (else on a UTF-8
// character boundary), the tail starts at a line start when one is near
// (else on a character boundary), and the marker line states exactly how many
// bytes and lines were dropped between them:
//
//	[scrollback: 123456789 bytes (45678 lines) dropped here: the copy cap of 8388608 bytes was crossed]
//
// Every byte is counted, retained or not, and Result.Complete is false
// whenever some byte is missing from the copy.
//
// # Caps
//
// Three caps bound the head: the copy cap (Limits.Copy) and one cap per
// stream (Limits.Stdout, Limits.Stderr). The head is the longest prefix of the
// merged output that fits the copy (with room for the marker and the tail)
// and in which neither stream has written more than its cap. Crossing any of
// the three ends the head for both streams: the rest of the output, from the
// first byte past a cap, reaches the copy only through the tail ring. This
// keeps the copy a prefix and a suffix of the output with one marker between
// them; a stream's bytes past its cap never enter the head, yet they are
// counted and feed the tail like any other byte. When everything written
// after the head still fits the ring, nothing is lost and the copy is the
// whole output.
package capture

import (
	"bytes"
	"errors"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
	"github.com/scrollback-dev/scrollback/present"
)

// Defaults and bounds for Limits.
const (
	// DefaultCopy is the default cap on the merged copy: 8 MiB.
	DefaultCopy = 8 << 20
	// DefaultStream is the default per-stream cap on stdout and on stderr.
	DefaultStream = 8 << 20
	// MinCopy is the smallest copy cap: smaller caps are raised to it so
	// that the marker line, the head and the tail always fit.
	MinCopy = 512
	// StderrTailSize is the most Result.StderrTail holds.
	StderrTailSize = 4 << 10
)

// nearLine is how far from a cut the capture looks for a line boundary
// before settling for a character boundary.
const nearLine = 4 << 10

// context bytes kept before the tail so that its first character boundary
// and line start can be told exactly.
const tailContext = utf8.UTFMax

// ErrDone is returned by writes that come after Result.
var ErrDone = errors.New("capture: write after Result: the copy is already final")

// Limits are a Capture's caps, in bytes. A zero (or negative) field takes
// its default.
type Limits struct {
	// Stdout and Stderr cap what each stream contributes to the head of
	// the copy; default DefaultStream (8 MiB) each. Bytes past a stream's
	// cap are still counted and still feed the tail.
	Stdout, Stderr int64
	// Copy caps the merged copy, marker line included; default DefaultCopy
	// (8 MiB), at least MinCopy.
	Copy int64
	// Tail is how many bytes of the end of the output the copy keeps once
	// a cap is crossed; default Copy/4 (2 MiB for the default copy cap). It
	// is lowered if needed to leave room for the marker line.
	Tail int64
	// HugePages asks, on Linux, that the copy cap's buffer be backed by
	// huge pages: a few page faults instead of one per 4 KiB while it
	// fills, which was a fifth of a short-lived process's capture cost
	// (scrollback run). Leave it off in a long-running process: each
	// advised buffer splits the heap's mappings, and the kernel may keep
	// huge pages over memory Go has given back (why Go's runtime stopped
	// advising them).
	HugePages bool
}

// InForce returns the caps a Capture made with l applies (New, Limits):
// defaults filled in, caps clamped to workable values.
func (l Limits) InForce() Limits {
	if l.Stdout <= 0 {
		l.Stdout = DefaultStream
	}
	if l.Stderr <= 0 {
		l.Stderr = DefaultStream
	}
	if l.Copy <= 0 {
		l.Copy = DefaultCopy
	}
	if l.Copy < MinCopy {
		l.Copy = MinCopy
	}
	if l.Tail <= 0 {
		l.Tail = l.Copy / 4
	}
	if max := l.Copy - int64(markerReserve) - tailContext; l.Tail > max {
		l.Tail = max
	}
	return l
}

// Result is what a Capture retained and counted.
type Result struct {
	// Copy is the retained copy: the whole output in arrival order, or
	// head + marker line + tail when bytes were dropped. It is at most
	// Limits.Copy bytes long. It shares memory with the Capture.
	Copy []byte
	// StdoutBytes and StderrBytes are the bytes written to each stream,
	// counted past every cap.
	StdoutBytes int64
	StderrBytes int64
	// Complete is true when Copy holds every byte written.
	Complete bool
	// Gap is nil when nothing was dropped; else it says where the marker
	// line starts in Copy and what was dropped there.
	Gap *Gap
	// StderrTail is the last StderrTailSize bytes (or fewer) of stderr
	// alone, starting on a UTF-8 character boundary, for previews that
	// show errors first. It does not share memory with the Capture.
	StderrTail []byte
}

// Gap describes the bytes a copy dropped between its head and its tail:
// present.Gap, so that the footer says what capture reports.
type Gap = present.Gap

// A Capture merges two streams into a bounded copy. Its writers are safe for
// concurrent use; Result must be called after every write has returned.
type Capture struct {
	mu     sync.Mutex
	limits Limits
	done   bool
	result Result

	// buf holds the head in buf[:len(buf)]. Once a cap is crossed, the
	// ring lives in the spare capacity just past the head, so the whole
	// capture holds at most Limits.Copy bytes.
	buf     []byte
	headMax int    // the most bytes the head may keep once a cap is crossed
	over    bool   // a cap was crossed: the head is final, the ring is live
	cause   string // which cap was crossed first
	ring    ring   // the last bytes of output past the head, in the buffer's spare region

	total    int64 // bytes written to both streams
	newlines int64 // newlines written to both streams
	streams  [2]int64
	errTail  tailRing // the last bytes of stderr alone

	// watch, when not nil, is signalled each time the settled prefix
	// passes another multiple of watchStep bytes (see Watch).
	watch     chan struct{}
	watchStep int
	watched   int // multiples of watchStep signalled so far
}

// New returns a Capture with the given limits (zero fields take defaults).
func New(l Limits) *Capture {
	l = l.InForce()
	return &Capture{
		limits:  l,
		headMax: int(l.Copy - int64(markerReserve) - l.Tail - tailContext),
	}
}

// Limits returns the caps the Capture applies, defaults filled in.
func (c *Capture) Limits() Limits { return c.limits }

const (
	stdout = 0
	stderr = 1
)

type streamWriter struct {
	c      *Capture
	stream int
}

func (w streamWriter) Write(p []byte) (int, error) { return w.c.write(w.stream, p) }

// Stdout returns the writer for the command's standard output. Each Write's
// bytes stay together in the copy. It never fails before Result.
func (c *Capture) Stdout() io.Writer { return streamWriter{c, stdout} }

// Stderr returns the writer for the command's standard error, safe for use
// concurrently with Stdout's.
func (c *Capture) Stderr() io.Writer { return streamWriter{c, stderr} }

// Writer returns a writer for single-stream use (a tool result that is not
// a command): what it is given counts as stdout.
func (c *Capture) Writer() io.Writer { return streamWriter{c, stdout} }

func (c *Capture) write(stream int, p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return 0, ErrDone
	}
	n := len(p)
	c.total += int64(n)
	c.newlines += int64(bytes.Count(p, newline))
	before := c.streams[stream]
	c.streams[stream] += int64(n)
	if stream == stderr {
		c.errTail.write(p)
	}
	if c.over {
		c.ring.write(p)
		return n, nil
	}
	room := c.limits.Copy - int64(len(c.buf))
	cause := "copy"
	if sr := c.streamCap(stream) - before; sr < room {
		room = sr
		cause = streamName(stream)
	}
	if int64(n) <= room {
		c.appendHead(p)
		c.signal()
		return n, nil
	}
	c.appendHead(p[:int(room)])
	c.overflow(cause, p[int(room):])
	c.signal()
	return n, nil
}

// Watch returns a channel that receives a value each time the settled
// prefix (see Settled) passes another multiple of step bytes, so that a
// caller storing it a chunk at a time wakes when there is a chunk to
// store, not on a timer. Signals that the receiver has not taken yet
// merge into one. Call it before the first write.
func (c *Capture) Watch(step int) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.watch, c.watchStep = make(chan struct{}, 1), max(step, 1)
	return c.watch
}

// signal signals watch when the settled prefix has passed another
// multiple of watchStep. c.mu is held.
func (c *Capture) signal() {
	if c.watch == nil {
		return
	}
	if k := c.settled() / c.watchStep; k > c.watched {
		c.watched = k
		select {
		case c.watch <- struct{}{}:
		default: // one is waiting already
		}
	}
}

var newline = []byte{'\n'}

func (c *Capture) streamCap(stream int) int64 {
	if stream == stderr {
		return c.limits.Stderr
	}
	return c.limits.Stdout
}

func streamName(stream int) string {
	if stream == stderr {
		return "stderr"
	}
	return "stdout"
}

// appendHead appends p to the head, growing buf lazily (never past the copy
// cap) so that small outputs stay small.
func (c *Capture) appendHead(p []byte) {
	c.grow(len(c.buf) + len(p))
	c.buf = append(c.buf, p...)
}

// grow makes cap(c.buf) at least need, never past the copy cap. It grows
// 4x from 4 KiB while the buffer is small, then straight to the copy cap:
// an output past 1 MiB is likely to fill the copy, and every step costs
// fresh pages (page faults dominate the cost of filling the head). With
// Limits.HugePages the big buffer starts on a huge page boundary and is
// advised to take huge pages (hugeBuffer).
func (c *Capture) grow(need int) {
	if need <= cap(c.buf) {
		return
	}
	n := max(4*cap(c.buf), need, 4096)
	if n > 1<<20 {
		n = int(c.limits.Copy)
	}
	n = min(n, int(c.limits.Copy))
	var b []byte
	if c.limits.HugePages {
		b = hugeBuffer(n)[:len(c.buf)]
	} else {
		b = make([]byte, len(c.buf), n)
	}
	copy(b, c.buf)
	c.buf = b
}

// overflow ends the head and moves its last bytes into the ring, which it
// places in the buffer's spare region past the head; rest is the part of the
// current write that did not fit.
func (c *Capture) overflow(cause string, rest []byte) {
	c.over = true
	c.cause = cause
	n := len(c.buf)
	keep := min(n, c.headMax)
	ringSize := int(c.limits.Tail) + tailContext
	// Room for the head, the ring and, at Result, the marker line.
	c.grow(keep + ringSize + markerReserve)
	full := c.buf[:cap(c.buf)]
	c.ring = ring{buf: full[keep : keep+ringSize : keep+ringSize]}
	if k := n - keep; k <= ringSize {
		// The bytes past the head are already in place at the ring's start.
		c.ring.pos, c.ring.fill = k%ringSize, k
	} else {
		copy(c.ring.buf, full[n-ringSize:n])
		c.ring.pos, c.ring.fill = 0, ringSize
	}
	c.buf = c.buf[:keep]
	c.ring.write(rest)
}

// Settled returns the leading bytes of the copy that no later write, and
// not Result, can change: the copy Result returns starts with them. A
// caller may store them while the command still runs. The slice is valid
// for reading as long as the Capture is; its bytes are never written again.
//
// Why they are settled: until a cap is crossed the head grows by appends
// only; when one is, the head keeps at most headMax bytes and Result cuts
// it back at most near(k) bytes (to a line or character boundary) from its
// end k; so the first k - near(k) bytes, k = min(len, headMax), stay.
func (c *Capture) Settled() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf[:c.settled()]
}

// settled is the length of Settled's prefix. c.mu is held.
func (c *Capture) settled() int {
	k := max(min(len(c.buf), c.headMax), 0)
	return k - near(k)
}

// Result returns the retained copy and the counts. Call it once every write
// has returned; later writes fail with ErrDone. Calling it again returns the
// same Result.
func (c *Capture) Result() Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return c.result
	}
	c.done = true
	r := Result{
		StdoutBytes: c.streams[stdout],
		StderrBytes: c.streams[stderr],
		Complete:    true,
		StderrTail:  c.errTail.bytes(),
	}
	if !c.over {
		r.Copy = c.buf
		c.result = r
		return r
	}
	ordered := c.ring.buf[:c.ring.fill]
	if c.ring.fill == len(c.ring.buf) {
		rotate(c.ring.buf, c.ring.pos)
	}
	head := len(c.buf)
	if c.total == int64(head+len(ordered)) {
		// The ring holds everything past the head: nothing was lost, and
		// the ring already sits right after the head.
		r.Copy = c.buf[:head+len(ordered)]
		c.result = r
		return r
	}
	// Bytes were lost, so the ring is full: its first tailContext bytes
	// are context for the cut, the tail proper follows.
	hc := cutHead(c.buf)
	ts := cutTail(ordered)
	tail := ordered[ts:]
	dropped := c.total - int64(hc) - int64(len(tail))
	lines := c.newlines - int64(bytes.Count(c.buf[:hc], newline)) - int64(bytes.Count(tail, newline))
	m := marker(hc > 0 && c.buf[hc-1] != '\n', dropped, lines, c.cause, c.capOf(c.cause))
	full := c.buf[:cap(c.buf)]
	copy(full[hc+len(m):], tail) // memmove: the regions may overlap
	copy(full[hc:], m)
	r.Copy = full[:hc+len(m)+len(tail)]
	r.Complete = false
	r.Gap = &Gap{Offset: int64(hc), Bytes: dropped, Lines: lines}
	c.ring = ring{}
	c.result = r
	return r
}

func (c *Capture) capOf(cause string) int64 {
	switch cause {
	case "stdout":
		return c.limits.Stdout
	case "stderr":
		return c.limits.Stderr
	}
	return c.limits.Copy
}

// rotate turns b left by k in place, so that b[k:] comes first. It moves
// the bytes with memmoves through a spare copy of the shorter side (at most
// half of b), not byte by byte.
func rotate(b []byte, k int) {
	n := len(b)
	if k <= 0 || k >= n {
		return
	}
	if k <= n-k {
		tmp := append([]byte(nil), b[:k]...)
		copy(b, b[k:])
		copy(b[n-k:], tmp)
		return
	}
	tmp := append([]byte(nil), b[k:]...)
	copy(b[n-k:], b[:k])
	copy(b, tmp)
}

// cutHead returns where the head should end: after its last newline when one
// is within nearLine bytes of its end, else at the last character boundary.
func cutHead(head []byte) int {
	n := len(head)
	if n == 0 || head[n-1] == '\n' {
		return n
	}
	from := max(0, n-near(n))
	if i := bytes.LastIndexByte(head[from:], '\n'); i >= 0 {
		return from + i + 1
	}
	return utf8x.CutEnd(head, n, false)
}

// cutTail returns where the tail should start in ring, whose first
// tailContext bytes precede the tail proper: at its first line start when
// one is within nearLine bytes, else at its first character boundary.
func cutTail(ring []byte) int {
	start := tailContext
	if ring[start-1] == '\n' {
		return start
	}
	w := near(len(ring) - start)
	if i := bytes.IndexByte(ring[start:start+w], '\n'); i >= 0 {
		return start + i + 1
	}
	if inside, _, end := utf8x.Inside(ring, start); inside {
		return end
	}
	return start
}

// near is how far to look for a line boundary in a part of n bytes: up to
// nearLine, and never more than a quarter of the part.
func near(n int) int { return min(nearLine, n/4) }

// markerReserve is the longest marker line there can be.
var markerReserve = len(marker(true, 1<<63-1, 1<<63-1, "stdout", 1<<63-1))

// marker returns the line that stands where bytes were dropped
// (present.GapMarker), preceded by a newline when the head does not end
// with one.
func marker(lead bool, dropped, lines int64, cause string, limit int64) []byte {
	b := make([]byte, 0, 160)
	if lead {
		b = append(b, '\n')
	}
	return append(b, present.GapMarker(dropped, lines, cause, limit)...)
}

// Marker is what a marker line says: present.Marker.
type Marker = present.Marker

// MarkerPrefix is how every marker line begins.
const MarkerPrefix = present.GapMarkerPrefix

// MaxMarkerLen bounds a marker line's length, its newlines included.
var MaxMarkerLen = markerReserve

// ParseMarker reads line (without the newlines around it) as a marker line
// of this package and returns what it says, or false when line is not
// exactly one (present.ParseGapMarker).
func ParseMarker(line []byte) (Marker, bool) { return present.ParseGapMarker(line) }

// ring keeps the last len(buf) bytes written to it: pos is where the next
// byte goes, fill how many bytes are in use.
type ring struct {
	buf       []byte
	pos, fill int
}

func (r *ring) write(p []byte) {
	size := len(r.buf)
	if len(p) >= size {
		copy(r.buf, p[len(p)-size:])
		r.pos, r.fill = 0, size
		return
	}
	k := copy(r.buf[r.pos:], p)
	copy(r.buf, p[k:])
	r.pos = (r.pos + len(p)) % size
	r.fill = min(r.fill+len(p), size)
}

// tailRing keeps the last StderrTailSize bytes written to it, plus a few
// bytes of context to find the first character boundary. Its memory is
// allocated on the first write.
type tailRing struct{ ring }

func (t *tailRing) write(p []byte) {
	if len(p) == 0 {
		return
	}
	if t.buf == nil {
		t.buf = make([]byte, StderrTailSize+tailContext)
	}
	t.ring.write(p)
}

// bytes returns the kept bytes in order, in a new slice.
func (t *tailRing) bytes() []byte {
	if t.fill == 0 {
		return nil
	}
	b := make([]byte, 0, t.fill)
	if t.fill < len(t.buf) {
		b = append(b, t.buf[:t.fill]...)
	} else {
		b = append(b, t.buf[t.pos:]...)
		b = append(b, t.buf[:t.pos]...)
	}
	if len(b) <= StderrTailSize {
		return b
	}
	start := len(b) - StderrTailSize
	if inside, _, end := utf8x.Inside(b, start); inside {
		start = end
	}
	return b[start:]
}
