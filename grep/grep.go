// Package grep searches a retained copy line by line with an RE2 pattern,
// streaming through it chunk by chunk so that memory does not grow with the
// copy's size.
//
// The copy is any io.ReaderAt of known size (store.ReaderAt adapts a stored
// copy). Search reads it in chunks of ChunkSize bytes, aligned to ChunkSize
// so that each read of a stored copy touches one stored chunk, and matches
// the pattern against each line:
//
//   - A line ends at "\n". The "\n" is not part of the line, and neither is a
//     "\r" just before it: "error$" matches "error\r\n". A final line without
//     "\n" is a line too; an empty copy has no lines.
//   - The pattern is matched against at most MaxLine bytes of a line (1 MiB by
//     default, cut at a UTF-8 boundary): a match past that point in a longer
//     line is not found. Such a line is always reported Truncated.
//   - A line's Text is cut at a UTF-8 boundary after TextBytes bytes (2 KiB by
//     default), Truncated then true: read the rest from the line's Offset.
//     Bytes that are not valid UTF-8 show as U+FFFD, one per byte; offsets
//     count raw bytes.
//   - A line that spans a chunk boundary is read whole and found once.
//
// Search starts at Options.Offset. Line numbers still count from the copy's
// start (the newlines before Offset are counted, which is fast). When Offset
// falls inside a line, the rest of that line, from Offset on, is the first
// line searched, with that line's number and Offset as its offset.
//
// Continuation: a Result holds at most Max matches. When more follow, HasMore
// is true and NextOffset is the start of the next matching line; searching
// again from NextOffset continues exactly where the result stopped, so that
// walking a copy this way returns every match once, each with the same
// context it would have had in one long result. When none follow, HasMore is
// false and NextOffset is the copy's size.
package grep

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/internal/utf8x"

	"github.com/scrollback-dev/scrollback/internal/errkind"
)

// Defaults and bounds.
const (
	// ChunkSize is how many bytes Search reads at once; reads are aligned to
	// it. It equals store.ChunkSize, so that each read is one stored chunk
	// (TestChunkSizeIsStores checks it; grep does not import store).
	ChunkSize = 64 << 10
	// DefaultMaxLine is the default Options.MaxLine: how much of one line the
	// pattern sees.
	DefaultMaxLine = 1 << 20
	// DefaultTextBytes is the default Options.TextBytes: how much of one line
	// a result shows.
	DefaultTextBytes = 2 << 10
	// MaxContext is the most context lines Options.Context may ask for.
	MaxContext = 100
)

// ErrOption is wrapped by the error Search returns for invalid Options.
var ErrOption = errkind.New("grep: invalid option", errkind.Argument)

// Options says where to search and how much to return. The zero value
// searches the whole copy without context and returns every match.
type Options struct {
	// chunk is the read size, ChunkSize when 0; tests make it small to put
	// chunk boundaries everywhere.
	chunk int64

	// Offset is the byte offset to start at: 0, a NextOffset, or a line's
	// offset. It must be from 0 to the copy's size; the caller makes sure it
	// is not inside a multi-byte character.
	Offset int64
	// Context is how many lines before and after each match to return, 0 to
	// MaxContext.
	Context int
	// Max is the most matches to return; 0 or less means no limit.
	Max int
	// Budget bounds the bytes of text (matched lines and context lines) in
	// one result: a match that would take the total past it is left for the
	// next call, HasMore then true. The first match is always returned. 0 or
	// less means no limit.
	Budget int
	// MaxLine is how many bytes of a line the pattern is matched against;
	// 0 means DefaultMaxLine.
	MaxLine int
	// TextBytes is how many bytes of a line a Line's Text holds; 0 means
	// DefaultTextBytes. It is at most MaxLine.
	TextBytes int
}

// Line is one line of the copy.
type Line struct {
	Number    int64  // 1-based line number in the copy
	Offset    int64  // byte offset of the line's start (of the search's start, for a first line cut by Offset)
	Text      string // the line without its line ending, cut after TextBytes; invalid bytes as U+FFFD
	Truncated bool   // Text is not the whole line
}

// Match is a line the pattern matches, with its context: up to
// Options.Context lines before and after it, whether or not those match too.
// Before-context may reach back before Options.Offset.
type Match struct {
	Line
	Before []Line
	After  []Line
}

// Result is what one Search returns.
type Result struct {
	Matches    []Match // in copy order; never nil
	NextOffset int64   // where to search next: the next match's line when HasMore, else the copy's size
	HasMore    bool    // another match starts at NextOffset
}

// Search returns the lines of the copy r (size bytes long) that re matches,
// from opts.Offset on. See the package documentation for what a line is and
// how results continue. Errors are invalid options (wrapping ErrOption) and
// errors from r.
func Search(r io.ReaderAt, size int64, re *regexp.Regexp, opts Options) (Result, error) {
	if opts.Offset < 0 || opts.Offset > size {
		return Result{}, fmt.Errorf("%w: offset %d is outside the copy (0 to %d)", ErrOption, opts.Offset, size)
	}
	if opts.Context < 0 || opts.Context > MaxContext {
		return Result{}, fmt.Errorf("%w: context %d is outside 0 to %d", ErrOption, opts.Context, MaxContext)
	}
	if re == nil {
		return Result{}, fmt.Errorf("%w: no pattern", ErrOption)
	}
	if opts.MaxLine <= 0 {
		opts.MaxLine = DefaultMaxLine
	}
	if opts.chunk <= 0 {
		opts.chunk = ChunkSize
	}
	if opts.TextBytes <= 0 {
		opts.TextBytes = DefaultTextBytes
	}
	opts.TextBytes = min(opts.TextBytes, opts.MaxLine)
	s := &searcher{re: re, opts: opts, res: Result{Matches: []Match{}}}
	s.plan()
	if err := s.run(r, size); err != nil {
		return Result{}, err
	}
	if !s.res.HasMore {
		s.res.NextOffset = size
	}
	return s.res, nil
}

// searcher is the state of one Search.
type searcher struct {
	re   *regexp.Regexp
	opts Options

	// How to find candidate lines fast (see plan). A candidate line is then
	// checked with literal (when exact) or re.
	needle []byte // bytes every matching line contains
	exact  bool   // the pattern is needle itself, case-sensitive
	fold   bool   // needle is lower-case ASCII; search a lower-cased block
	low    []byte // the current block, lower-cased (fold only)

	lineNo int64 // number of the next line to be read
	ring   []ringLine
	ringN  int // lines in ring
	ringAt int // index of the oldest line in ring
	used   int // text bytes in the result so far

	res     Result
	pending int // index of the first match that still wants after-context
}

// ringLine is a line kept for before-context, in reused storage.
type ringLine struct {
	num       int64
	off       int64
	text      []byte
	truncated bool
}

// plan picks a fast way to find candidate lines: a literal every match
// contains, searched for with bytes.Index (in a lower-cased copy of the
// block for a case-insensitive one). When the whole pattern is a literal,
// the candidate is checked with bytes.Contains, else with re.
// Otherwise every line is matched with re.
func (s *searcher) plan() {
	prefix, complete := s.re.LiteralPrefix()
	if i := strings.IndexRune(prefix, utf8.RuneError); i >= 0 {
		// In the pattern U+FFFD also matches each byte that is not valid
		// UTF-8: only the part before it can be searched for as bytes.
		prefix, complete = prefix[:i], false
	}
	if prefix != "" && complete {
		s.needle, s.exact = []byte(prefix), true
		return
	}
	s.needle = []byte(prefix)
	re, err := syntax.Parse(s.re.String(), syntax.Perl)
	if err != nil {
		return
	}
	if needle, fold := required(re.Simplify()); len(needle) > len(s.needle) {
		s.needle, s.fold = needle, fold
	}
	if len(s.needle) == 0 {
		s.needle = nil
	}
}

// required returns a literal that every match of re contains, as long as
// it can find: bytes to search for as they are or, when fold is true, in a
// lower-cased copy of the text.
func required(re *syntax.Regexp) (needle []byte, fold bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			// The longest run without U+FFFD, which also matches each
			// byte that is not valid UTF-8.
			var best []rune
			for run := range strings.SplitSeq(string(re.Rune), string(utf8.RuneError)) {
				if len(run) > len(string(best)) {
					best = []rune(run)
				}
			}
			return []byte(string(best)), false
		}
		// The longest run of ASCII characters whose case-folded forms are
		// all ASCII ('k' folds to U+212A KELVIN SIGN, 's' to U+017F).
		var best, cur []byte
		for _, c := range re.Rune {
			if c < utf8.RuneSelf && asciiFoldOnly(c) {
				cur = append(cur, lowerASCII(byte(c)))
				if len(cur) > len(best) {
					best = cur
				}
				continue
			}
			cur = nil
		}
		return best, true
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if n, f := required(sub); len(n) > len(needle) {
				needle, fold = n, f
			}
		}
		return needle, fold
	}
	return nil, false
}

// asciiFoldOnly reports whether every case-folded form of the ASCII
// character c is ASCII ('k' folds to U+212A KELVIN SIGN, 's' to U+017F).
func asciiFoldOnly(c rune) bool {
	for f := unicode.SimpleFold(c); f != c; f = unicode.SimpleFold(f) {
		if f >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func (s *searcher) run(r io.ReaderAt, size int64) error {
	k := s.opts.Context
	if k > 0 {
		s.ring = make([]ringLine, k)
	}
	s.lineNo = 1
	if s.opts.Offset > 0 {
		// Count the lines before Offset, keeping the last k+1 newlines: the
		// line Offset is in starts after the last one, and its before-context
		// starts after the (k+1)-th last.
		nls, ends, err := countLines(r, s.opts.Offset, k+1, s.opts.chunk)
		if err != nil {
			return err
		}
		if k > 0 && nls > 0 {
			from := int64(0)
			if len(ends) > k {
				from = ends[len(ends)-k-1] + 1
			}
			s.lineNo = nls + 1 - int64(min(k, len(ends)))
			b := newBlocks(r, from, ends[len(ends)-1]+1, s.opts.MaxLine, s.opts.chunk)
			for {
				blk, err := b.next()
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				s.eachLine(blk, func(l line) { s.push(l) })
			}
		}
		s.lineNo = nls + 1
	}
	b := newBlocks(r, s.opts.Offset, size, s.opts.MaxLine, s.opts.chunk)
	for {
		blk, err := b.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !s.block(blk) {
			return nil
		}
	}
}

// countLines counts the newlines in the first off bytes of r and returns
// the offsets of the last (at most) keep of them, in order.
func countLines(r io.ReaderAt, off int64, keep int, chunk int64) (int64, []int64, error) {
	buf := make([]byte, chunk)
	var n int64
	ends := make([]int64, 0, 2*keep)
	var last []int64
	for at := int64(0); at < off; {
		// Align reads to ChunkSize.
		p := buf[:min(off-at, chunk-at%chunk)]
		if _, err := readFull(r, p, at); err != nil {
			return 0, nil, err
		}
		n += int64(bytes.Count(p, nl))
		last = last[:0]
		for j := len(p); len(last) < keep; {
			if j = bytes.LastIndexByte(p[:j], '\n'); j < 0 {
				break
			}
			last = append(last, at+int64(j))
		}
		for i := len(last) - 1; i >= 0; i-- {
			ends = append(ends, last[i])
		}
		if len(ends) > keep {
			ends = append(ends[:0], ends[len(ends)-keep:]...)
		}
		at += int64(len(p))
	}
	return n, ends, nil
}

var nl = []byte{'\n'}

// readFull reads len(p) bytes at off, which the caller knows exist.
func readFull(r io.ReaderAt, p []byte, off int64) (int, error) {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return n, nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, fmt.Errorf("grep: reading %d bytes at offset %d: %w", len(p), off, err)
}

// line is one line as the search sees it.
type line struct {
	num     int64
	off     int64
	content []byte // without its line ending, cut to MaxLine
	long    bool   // content was cut
}

// newLine makes the line whose bytes (line ending removed) are content.
func (s *searcher) newLine(content []byte, off int64) line {
	l := line{num: s.lineNo, off: off, content: content}
	s.lineNo++
	if len(content) > s.opts.MaxLine {
		l.content, l.long = content[:utf8x.CutEnd(content, s.opts.MaxLine, true)], true
	}
	return l
}

// text returns what a result shows of l's content.
func (s *searcher) text(content []byte, long bool) ([]byte, bool) {
	if len(content) > s.opts.TextBytes {
		return content[:utf8x.CutEnd(content, s.opts.TextBytes, true)], true
	}
	return content, long
}

func (s *searcher) resultLine(l line) Line {
	t, trunc := s.text(l.content, l.long)
	return Line{Number: l.num, Offset: l.off, Text: utf8x.ValidString(t), Truncated: trunc}
}

// eachLine calls fn for every line of blk.
func (s *searcher) eachLine(blk block, fn func(line)) {
	if blk.long {
		l := s.newLine(blk.data, blk.at)
		l.long = true
		fn(l)
		return
	}
	data := blk.data
	for p := 0; p < len(data); {
		content, next := cutLine(data, p)
		fn(s.newLine(content, blk.at+int64(p)))
		p = next
	}
}

// cutLine returns the line of data that starts at p, without its line
// ending, and the index of the next line.
func cutLine(data []byte, p int) ([]byte, int) {
	e := bytes.IndexByte(data[p:], '\n')
	if e < 0 {
		return data[p:], len(data)
	}
	content := data[p : p+e]
	if e > 0 && content[e-1] == '\r' {
		content = content[:e-1]
	}
	return content, p + e + 1
}

// block searches the lines of blk. It returns false when the search is done.
func (s *searcher) block(blk block) bool {
	if blk.long {
		l := s.newLine(blk.data, blk.at)
		l.long = true
		return s.line(l)
	}
	data := blk.data
	if s.fold {
		s.low = lowerInto(s.low, data)
	}
	for p := 0; p < len(data); {
		if s.pending == len(s.res.Matches) && s.needle != nil {
			// Skip to the line of the next place the needle occurs.
			var i int
			if s.fold {
				i = bytes.Index(s.low[p:], s.needle)
			} else {
				i = bytes.Index(data[p:], s.needle)
			}
			q := len(data)
			if i >= 0 {
				q = p + bytes.LastIndexByte(data[p:p+i], '\n') + 1
			}
			if q > p {
				s.skip(blk.at+int64(p), data[p:q])
				p = q
			}
			if i < 0 {
				return true
			}
		}
		content, next := cutLine(data, p)
		if !s.line(s.newLine(content, blk.at+int64(p))) {
			return false
		}
		p = next
	}
	return true
}

// skip passes over region, whole lines that hold no match, starting at
// offset at: it counts them and keeps the last ones for before-context.
func (s *searcher) skip(at int64, region []byte) {
	k := len(s.ring)
	if k == 0 {
		s.lineNo += int64(bytes.Count(region, nl))
		return
	}
	// Find j, the start of the k-th last line of region.
	j, t := 0, len(region)
	if t > 0 && region[t-1] == '\n' {
		t--
	}
	for i := 0; i < k; i++ {
		x := bytes.LastIndexByte(region[:t], '\n')
		if x < 0 {
			j = 0
			break
		}
		j, t = x+1, x
	}
	s.lineNo += int64(bytes.Count(region[:j], nl))
	for p := j; p < len(region); {
		content, next := cutLine(region, p)
		s.push(s.newLine(content, at+int64(p)))
		p = next
	}
}

// line handles one line in the search. It returns false when the search
// is done.
func (s *searcher) line(l line) bool {
	var matched bool
	switch {
	case s.exact:
		matched = bytes.Contains(l.content, s.needle)
	default:
		matched = s.re.Match(l.content)
	}
	if s.pending < len(s.res.Matches) {
		// l is after-context of every match since pending.
		rl := s.resultLine(l)
		for i := s.pending; i < len(s.res.Matches); i++ {
			m := &s.res.Matches[i]
			m.After = append(m.After, rl)
			s.used += len(rl.Text)
		}
		for s.pending < len(s.res.Matches) && len(s.res.Matches[s.pending].After) >= s.opts.Context {
			s.pending++
		}
	}
	if matched && !s.res.HasMore {
		if s.opts.Max > 0 && len(s.res.Matches) >= s.opts.Max {
			s.res.HasMore, s.res.NextOffset = true, l.off
		} else {
			m := Match{Line: s.resultLine(l)}
			cost := len(m.Text)
			if s.ringN > 0 {
				m.Before = make([]Line, s.ringN)
				for i := range s.ringN {
					r := &s.ring[(s.ringAt+i)%len(s.ring)]
					m.Before[i] = Line{Number: r.num, Offset: r.off, Text: utf8x.ValidString(r.text), Truncated: r.truncated}
					cost += len(m.Before[i].Text)
				}
			}
			if s.opts.Budget > 0 && len(s.res.Matches) > 0 && s.used+cost > s.opts.Budget {
				s.res.HasMore, s.res.NextOffset = true, l.off
			} else {
				s.res.Matches = append(s.res.Matches, m)
				s.used += cost
				if s.opts.Context == 0 {
					s.pending = len(s.res.Matches)
				}
			}
		}
	}
	s.push(l)
	return !s.res.HasMore || s.pending < len(s.res.Matches)
}

// push keeps l as the newest line of before-context.
func (s *searcher) push(l line) {
	if len(s.ring) == 0 {
		return
	}
	var r *ringLine
	if s.ringN < len(s.ring) {
		r = &s.ring[(s.ringAt+s.ringN)%len(s.ring)]
		s.ringN++
	} else {
		r = &s.ring[s.ringAt]
		s.ringAt = (s.ringAt + 1) % len(s.ring)
	}
	t, trunc := s.text(l.content, l.long)
	r.num, r.off, r.truncated = l.num, l.off, trunc
	r.text = append(r.text[:0], t...)
}

// lowerInto sets dst to src with ASCII letters in lower case.
func lowerInto(dst, src []byte) []byte {
	if cap(dst) < len(src) {
		dst = make([]byte, len(src), max(len(src), ChunkSize))
	}
	dst = dst[:len(src)]
	for i, c := range src {
		dst[i] = lowerTable[c]
	}
	return dst
}

var lowerTable = func() (t [256]byte) {
	for i := range t {
		t[i] = lowerASCII(byte(i))
	}
	return t
}()

// block is a run of whole lines read from the copy.
type block struct {
	at   int64  // offset of data[0]
	data []byte // whole lines; only the range's last line may lack "\n"
	long bool   // data is the cut head of one line longer than MaxLine
}

// blocks reads a range of the copy as blocks of whole lines, in chunks
// aligned to ChunkSize, holding at most one chunk plus one line of up to
// MaxLine (+3) bytes.
type blocks struct {
	r        io.ReaderAt
	off, end int64 // next byte to read; end of the range
	maxLine  int
	chunk    int64  // read size: Options.chunk
	buf      []byte // buf[start:] is read but not yet returned
	start    int
	at       int64 // offset of buf[start]
	scanned  int   // bytes of buf[start:] known to hold no newline
	long     []byte
}

func newBlocks(r io.ReaderAt, from, end int64, maxLine int, chunk int64) *blocks {
	return &blocks{r: r, off: from, end: end, at: from, maxLine: maxLine, chunk: chunk, buf: make([]byte, 0, 2*chunk)}
}

// next returns the next block, or io.EOF at the end of the range. The block
// is valid until the following call.
func (b *blocks) next() (block, error) {
	for {
		data := b.buf[b.start:]
		if i := bytes.LastIndexByte(data[b.scanned:], '\n'); i >= 0 {
			i += b.scanned
			blk := block{at: b.at, data: data[:i+1]}
			b.start += i + 1
			b.at += int64(i + 1)
			b.scanned = 0
			return blk, nil
		}
		b.scanned = len(data)
		if b.off >= b.end {
			if len(data) == 0 {
				return block{}, io.EOF
			}
			blk := block{at: b.at, data: data}
			b.start = len(b.buf)
			b.at += int64(len(data))
			b.scanned = 0
			return blk, nil
		}
		if len(data) >= b.maxLine+utf8.UTFMax {
			return b.longLine()
		}
		// Keep the partial line and read one more chunk after it.
		n := copy(b.buf, data)
		b.buf, b.start = b.buf[:n], 0
		want := int(min(b.end-b.off, b.chunk-b.off%b.chunk))
		if cap(b.buf)-n < want {
			nb := make([]byte, n, 2*cap(b.buf)+want)
			copy(nb, b.buf)
			b.buf = nb
		}
		if _, err := readFull(b.r, b.buf[n:n+want], b.off); err != nil {
			return block{}, err
		}
		b.buf = b.buf[:n+want]
		b.off += int64(want)
	}
}

// longLine returns the head of a line longer than MaxLine, whose first
// MaxLine+3 bytes or more are buf[start:], and reads past the rest of it.
func (b *blocks) longLine() (block, error) {
	data := b.buf[b.start:]
	b.long = append(b.long[:0], data[:utf8x.CutEnd(data, b.maxLine, false)]...)
	blk := block{at: b.at, data: b.long, long: true}
	b.buf, b.start, b.scanned = b.buf[:0], 0, 0
	for b.off < b.end {
		want := int(min(b.end-b.off, b.chunk-b.off%b.chunk))
		p := b.buf[:want]
		if _, err := readFull(b.r, p, b.off); err != nil {
			return block{}, err
		}
		b.off += int64(want)
		if i := bytes.IndexByte(p, '\n'); i >= 0 {
			b.buf, b.start = p, i+1
			b.at = b.off - int64(want) + int64(i+1)
			return blk, nil
		}
	}
	b.at = b.end
	return blk, nil
}
