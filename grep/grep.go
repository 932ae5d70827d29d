// Package grep searches a retained copy line by line with an RE2 pattern,
// streaming through it chunk by chunk so that memory does not grow with the
// copy's size, nor with the length of its lines.
//
// The copy is any io.ReaderAt of known size (store.ReaderAt adapts a stored
// copy). Search reads it in chunks of ChunkSize bytes, aligned to ChunkSize
// so that each read of a stored copy touches one stored chunk.
//
// What matches is, by construction, what Go's regexp says: a line matches
// exactly when re.Match would report true for the line's bytes.
//
//   - A line ends at "\n". The "\n" is not part of the line, and neither is a
//     "\r" just before it: "error$" matches "error\r\n". A final line without
//     "\n" is a line too; an empty copy has no lines.
//   - Every byte of every line is searched, whatever the line's length. A
//     line up to 1 MiB is held in memory and matched as bytes; a longer one
//     is matched as a stream of runes read from the copy (regexp's
//     FindReaderIndex, which needs no more of the text than it reads), so
//     that a line of many MiB costs a chunk of memory, not its length: a
//     search holds a few MiB at most, whatever the copy.
//   - Fast paths, derived from the parsed pattern (see prefilter), only
//     skip what cannot match: lines that hold none of a set of literals one
//     of which every match contains, and, in a streamed line, the bytes
//     before the first occurrence of the literal every match starts with.
//     A pattern that is one literal (case-sensitive, or folded with only
//     ASCII folds) is matched by looking for its bytes, which gives the
//     regexp's answer (see exactLiteral). FuzzSearch and scrollback's
//     FuzzGrepToolOutput check all of it against regexp.Match on every
//     line.
//   - A match's Text is the whole line when the line is at most TextBytes
//     (1 KiB by default) long. In a longer line it is a window of at most
//     TextBytes around the leftmost match, cut on character boundaries,
//     Truncated then true, and the match's Offset is where that window
//     starts, so that reading the copy from Offset shows the match. A
//     context line longer than TextBytes shows its first TextBytes bytes,
//     with its start as Offset. Bytes that are not valid UTF-8 show as
//     U+FFFD, one per byte; offsets count raw bytes.
//   - Lines, and matches, that span chunk boundaries are found once.
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
// false and NextOffset is the copy's size. With Options.Count, Search only
// counts the matching lines from Offset on.
package grep

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/internal/errkind"
	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// Defaults and bounds.
const (
	// ChunkSize is how many bytes Search reads at once; reads are aligned to
	// it. It equals store.ChunkSize, so that each read is one stored chunk
	// (TestChunkSizeIsStores checks it; grep does not import store).
	ChunkSize = 64 << 10
	// DefaultTextBytes is the default Options.TextBytes: the most bytes of
	// a line a result shows.
	DefaultTextBytes = 1 << 10
	// MaxContext is the most context lines Options.Context may ask for.
	MaxContext = 100

	// lineMemory is the longest line Search holds in memory to match it as
	// bytes. A longer line is read twice as a stream: once to find its end
	// (and the prefilter's literal), once through the regexp as runes.
	lineMemory = 1 << 20
)

// ErrOption is wrapped by the error Search returns for invalid Options.
var ErrOption = errkind.New("grep: invalid option", errkind.Argument)

// Options says where to search and how much to return. The zero value
// searches the whole copy without context and returns every match.
type Options struct {
	// chunk is the read size, ChunkSize when 0, and lineMemory the longest
	// line held in memory, lineMemory when 0; tests make them small to put
	// chunk boundaries and streamed lines everywhere.
	chunk      int64
	lineMemory int

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
	// TextBytes is the most bytes of a line a Line's Text holds; 0 means
	// DefaultTextBytes.
	TextBytes int
	// Count asks only for Result.Count: Matches stays empty, and Context,
	// Max and Budget do not apply.
	Count bool
}

// Line is one line of the copy.
type Line struct {
	Number int64 // 1-based line number in the copy
	// Offset is where Text starts in the copy: the line's start (the
	// search's start, for a first line cut by Options.Offset) or, for a
	// match in a line longer than TextBytes, the start of the window.
	Offset    int64
	Text      string // the line without its line ending, or a window of it; invalid bytes as U+FFFD
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
	Count      int64   // with Options.Count: how many lines from Options.Offset on match
}

// Search returns the lines of the copy r (size bytes long) that re matches,
// from opts.Offset on. re must be compiled with regexp.Compile or
// regexp.MustCompile (Perl syntax; Longest or not): the prefilter parses
// re.String() that way. See the package documentation for what a line is
// and how results continue. Errors are invalid options (wrapping ErrOption)
// and errors from r.
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
	if opts.chunk <= 0 {
		opts.chunk = ChunkSize
	}
	if opts.TextBytes <= 0 {
		opts.TextBytes = DefaultTextBytes
	}
	if opts.lineMemory <= 0 {
		opts.lineMemory = lineMemory
	}
	// A streamed line's head must hold a context line's text and the three
	// bytes after it that say where a character ends.
	opts.lineMemory = max(opts.lineMemory, opts.TextBytes+utf8.UTFMax)
	if opts.Count {
		opts.Context, opts.Max, opts.Budget = 0, 0, 0
	}
	s := &searcher{r: r, re: re, opts: opts, pf: newPrefilter(re), res: Result{Matches: []Match{}}}
	s.next = make([]int, len(s.pf.needles))
	if err := s.run(size); err != nil {
		return Result{}, err
	}
	if !s.res.HasMore {
		s.res.NextOffset = size
	}
	return s.res, nil
}

// CrossesLines reports whether every match of re holds a newline: a
// pattern that can match only across lines, such as "a\nb" or "}\s*\n\s*{".
// Search matches one line at a time, and a line never holds its newline,
// so such a pattern matches no line of any copy; a caller should refuse
// it rather than report that nothing matched. re must be compiled as
// Search requires. A pattern some of whose matches hold no newline ("a|\n",
// "\s") is not one: it is searched, and matches within lines.
func CrossesLines(re *regexp.Regexp) bool {
	tree, ok := parse(re)
	return ok && needsNewline(tree)
}

// parse parses re's pattern the way regexp.Compile does, simplified, for
// what Search and CrossesLines derive from it; ok is false when it does
// not parse so (a pattern compiled otherwise).
func parse(re *regexp.Regexp) (tree *syntax.Regexp, ok bool) {
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return nil, false
	}
	return tree.Simplify(), true
}

// needsNewline reports whether every match of re holds a newline: a
// literal holding one, or a class of the newline alone; a group, x+ or
// x{n,m} with n >= 1 of such an x; a concatenation with such a part; an
// alternation of such alternatives only.
func needsNewline(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return slices.Contains(re.Rune, '\n')
	case syntax.OpCharClass:
		return len(re.Rune) == 2 && re.Rune[0] == '\n' && re.Rune[1] == '\n'
	case syntax.OpCapture, syntax.OpPlus:
		return needsNewline(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min >= 1 && needsNewline(re.Sub[0])
	case syntax.OpConcat:
		return slices.ContainsFunc(re.Sub, needsNewline)
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !needsNewline(sub) {
				return false
			}
		}
		return len(re.Sub) > 0
	}
	return false
}

// prefilter is what Search knows about every match of the pattern before
// matching, derived from the pattern parsed as regexp.Compile parses it:
//
//   - needles, when not nil, are literals one of which every match
//     contains: a line that holds none of them does not match, and is not
//     matched. required derives them; each of its cases keeps that
//     property (see its comment).
//   - exact says that the pattern is one literal, needles[0]: a line
//     matches exactly when it holds needles[0], and the leftmost match is
//     needles[0]'s first occurrence (see exactLiteral).
//   - prefix, when not nil, is a literal every match starts with, and with
//     which the compiled program starts, before any empty-width assertion
//     (syntax.Prog.Prefix): matching a streamed line may then start at
//     prefix's first occurrence in it, as regexp itself skips to its
//     prefix in a []byte (see match).
//
// When fold is true, needles are in ASCII lower case and are looked for in
// an ASCII-lower-cased copy of the text; prefix never folds.
type prefilter struct {
	needles [][]byte
	exact   bool
	fold    bool
	prefix  []byte
}

// maxNeedles bounds the literals of an alternation the prefilter looks for.
const maxNeedles = 8

// newPrefilter parses re the way regexp.Compile does and derives its
// prefilter; a pattern that does not parse so gets none (every line is
// matched with re).
func newPrefilter(re *regexp.Regexp) prefilter {
	tree, ok := parse(re)
	if !ok {
		return prefilter{}
	}
	if needle, fold, ok := exactLiteral(tree); ok {
		return prefilter{needles: [][]byte{needle}, exact: true, fold: fold}
	}
	var pf prefilter
	if set, ok := required(tree); ok {
		pf.needles, pf.fold = set.needles, set.fold
	}
	if prog, err := syntax.Compile(tree); err == nil {
		// A rune that is not valid (a surrogate) is written as U+FFFD: such
		// a prefix can never match, and is not used.
		if prefix, _ := prog.Prefix(); prefix != "" && !strings.ContainsRune(prefix, utf8.RuneError) {
			pf.prefix = []byte(prefix)
		}
	}
	return pf
}

// exactLiteral reports whether the parsed pattern re is one literal whose
// matches are exactly the places its bytes occur in the text, and returns
// those bytes (lower-cased, fold true, for a case-folded one):
//
//   - a case-sensitive literal without U+FFFD matches exactly where its
//     UTF-8 bytes occur: UTF-8 is self-synchronising (a lead byte is never
//     a continuation byte) and regexp decodes every invalid byte as a
//     one-byte U+FFFD, so regexp's rune boundaries fall at the start and end
//     of any place the bytes occur. (U+FFFD also matches invalid bytes.)
//   - a case-folded literal of ASCII characters whose every case fold is
//     ASCII matches exactly where its ASCII-lower-cased bytes occur in the
//     ASCII-lower-cased text: each of its characters matches only its
//     ASCII upper- and lower-case bytes ('k' also matches U+212A KELVIN
//     SIGN and 's' U+017F LONG S, so they are not such characters), and an
//     ASCII byte is always a rune of its own.
func exactLiteral(re *syntax.Regexp) (needle []byte, fold, ok bool) {
	if re.Op != syntax.OpLiteral || len(re.Rune) == 0 {
		return nil, false, false
	}
	if re.Flags&syntax.FoldCase == 0 {
		lit := string(re.Rune)
		return []byte(lit), false, !strings.ContainsRune(lit, utf8.RuneError)
	}
	needle = make([]byte, len(re.Rune))
	for i, c := range re.Rune {
		if c >= utf8.RuneSelf || !asciiFoldOnly(c) {
			return nil, false, false
		}
		needle[i] = lowerASCII(byte(c))
	}
	return needle, true, true
}

// needleSet is a set of literals one of which every match of a pattern
// contains; fold says they are to be found in ASCII-lower-cased text.
type needleSet struct {
	needles [][]byte
	fold    bool
}

// shortest is the length of the set's shortest needle: how selective the
// set is.
func (n needleSet) shortest() int {
	m := -1
	for _, x := range n.needles {
		if m < 0 || len(x) < m {
			m = len(x)
		}
	}
	return m
}

// required returns a set of literals one of which every match of re
// contains, ok false when it finds none. Each case keeps that property:
//
//   - a case-sensitive literal contains its longest run of characters
//     without U+FFFD (which also matches invalid bytes), as UTF-8 bytes,
//     for the reason exactLiteral gives.
//   - a case-folded literal contains, in ASCII-lower-cased text, its longest
//     run of ASCII characters whose every fold is ASCII, lower-cased.
//   - a group, x+ and x{n,} with n >= 1 contain a match of x; a
//     concatenation contains a match of each part, so the best part's set
//     (its shortest needle the longest) serves.
//   - an alternation's match is one alternative's: the union of their sets,
//     if each has one (at most maxNeedles). Where some are case-folded and
//     some not, all are looked for lower-cased in lower-cased text: a place
//     where a needle occurs is also a place where its lower-cased form
//     occurs in the lower-cased text.
func required(re *syntax.Regexp) (needleSet, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		var best []byte
		if re.Flags&syntax.FoldCase == 0 {
			for run := range strings.SplitSeq(string(re.Rune), string(utf8.RuneError)) {
				if len(run) > len(best) {
					best = []byte(run)
				}
			}
			return needleSet{needles: [][]byte{best}}, len(best) > 0
		}
		var cur []byte
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
		return needleSet{needles: [][]byte{best}, fold: true}, len(best) > 0
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best needleSet
		found := false
		for _, sub := range re.Sub {
			set, ok := required(sub)
			if ok && (!found || set.shortest() > best.shortest() ||
				set.shortest() == best.shortest() && len(set.needles) < len(best.needles)) {
				best, found = set, true
			}
		}
		return best, found
	case syntax.OpAlternate:
		var union needleSet
		for _, sub := range re.Sub {
			set, ok := required(sub)
			if !ok || len(union.needles)+len(set.needles) > maxNeedles {
				return needleSet{}, false
			}
			union.needles = append(union.needles, set.needles...)
			union.fold = union.fold || set.fold
		}
		if union.fold {
			for _, n := range union.needles {
				for j, c := range n {
					n[j] = lowerTable[c]
				}
			}
		}
		return union, true
	}
	return needleSet{}, false
}

// asciiFoldOnly reports whether every case-folded form of the ASCII
// character c is ASCII.
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

// searcher is the state of one Search.
type searcher struct {
	r       io.ReaderAt
	re      *regexp.Regexp
	opts    Options
	pf      prefilter
	low     []byte     // the current block, lower-cased (pf.fold only)
	next    []int      // per needle, where it next occurs in the current block (see nextNeedle)
	lowLine []byte     // a line, lower-cased (pf.exact and pf.fold)
	rr      runeReader // a streamed line, for re
	win     []byte     // bytes around a match in a streamed line
	err     error      // what stopped the search, from r

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

func (s *searcher) run(size int64) error {
	k := s.opts.Context
	if k > 0 {
		s.ring = make([]ringLine, k)
	}
	s.lineNo = 1
	if s.opts.Offset > 0 && !s.opts.Count {
		// Count the lines before Offset, keeping the last k+1 newlines: the
		// line Offset is in starts after the last one, and its before-context
		// starts after the (k+1)-th last.
		nls, ends, err := countLines(s.r, s.opts.Offset, k+1, s.opts.chunk)
		if err != nil {
			return err
		}
		if k > 0 && nls > 0 {
			from := int64(0)
			if len(ends) > k {
				from = ends[len(ends)-k-1] + 1
			}
			s.lineNo = nls + 1 - int64(min(k, len(ends)))
			b := s.newBlocks(from, ends[len(ends)-1]+1)
			for {
				blk, err := b.next()
				if err == io.EOF {
					break
				}
				if err != nil {
					return err
				}
				s.eachLine(blk, s.push)
			}
		}
		s.lineNo = nls + 1
	}
	b := s.newBlocks(s.opts.Offset, size)
	for {
		blk, err := b.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !s.block(blk) {
			return s.err
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
	off     int64     // offset of the line's start
	content []byte    // without its line ending; only its head when streamed
	long    *longLine // not nil: the line is streamed, content is its head
}

// size is the length of the line without its ending.
func (l *line) size() int64 {
	if l.long != nil {
		return l.long.end - l.long.start
	}
	return int64(len(l.content))
}

// newLine makes the next line, held in memory: content without its line
// ending, starting at off.
func (s *searcher) newLine(content []byte, off int64) line {
	l := line{num: s.lineNo, off: off, content: content}
	s.lineNo++
	return l
}

// streamed makes the next line from a streamed one.
func (s *searcher) streamed(ll *longLine) line {
	l := line{num: s.lineNo, off: ll.start, content: ll.head, long: ll}
	s.lineNo++
	return l
}

// head returns what a context line shows of l: its first TextBytes bytes,
// cut at a character boundary, and whether that is not all of it.
func (s *searcher) head(l *line) ([]byte, bool) {
	if l.long != nil {
		// The head holds three bytes past TextBytes: CutEnd is exact.
		return l.content[:utf8x.CutEnd(l.content, s.opts.TextBytes, false)], true
	}
	if len(l.content) <= s.opts.TextBytes {
		return l.content, false
	}
	return l.content[:utf8x.CutEnd(l.content, s.opts.TextBytes, true)], true
}

func (s *searcher) contextLine(l *line) Line {
	t, trunc := s.head(l)
	return Line{Number: l.num, Offset: l.off, Text: utf8x.ValidString(t), Truncated: trunc}
}

// eachLine calls fn for every line of blk.
func (s *searcher) eachLine(blk block, fn func(line)) {
	if blk.long != nil {
		fn(s.streamed(blk.long))
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

// block searches the lines of blk. It returns false when the search is done
// (or failed: s.err).
func (s *searcher) block(blk block) bool {
	if blk.long != nil {
		return s.line(s.streamed(blk.long))
	}
	data, hay := blk.data, blk.data
	if s.pf.fold {
		s.low = lowerInto(s.low, data)
		hay = s.low
	}
	for i := range s.next {
		s.next[i] = unknown
	}
	for p := 0; p < len(data); {
		if s.pending == len(s.res.Matches) && s.pf.needles != nil {
			// Skip to the line of the next place a needle occurs: the
			// lines before it cannot match.
			i := s.nextNeedle(hay, p)
			q := len(data)
			if i >= 0 {
				q = p + bytes.LastIndexByte(data[p:i], '\n') + 1
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

// Values of searcher.next besides an index.
const (
	unknown = -1 // not looked for since the block began
	nowhere = -2 // not in the rest of the block
)

// nextNeedle returns the index in hay, from p on, of the first place a
// needle occurs, or -1. It remembers where each needle was found, so that
// walking a block looks at each byte about once per needle.
func (s *searcher) nextNeedle(hay []byte, p int) int {
	best := -1
	for i, n := range s.pf.needles {
		at := s.next[i]
		if at == nowhere {
			continue
		}
		if at < p {
			j := bytes.Index(hay[p:], n)
			if j < 0 {
				s.next[i] = nowhere
				continue
			}
			at = p + j
			s.next[i] = at
		}
		if best < 0 || at < best {
			best = at
		}
	}
	return best
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

// match reports whether re matches l. When where is true it also returns
// the leftmost match's start and end, relative to the line's start.
func (s *searcher) match(l *line, where bool) (ok bool, from, to int64, err error) {
	if ll := l.long; ll != nil {
		return s.matchStreamed(ll, where)
	}
	c := l.content
	if s.pf.exact {
		n := s.pf.needles[0]
		if s.pf.fold {
			s.lowLine = lowerInto(s.lowLine, c)
			c = s.lowLine
		}
		i := int64(bytes.Index(c, n))
		return i >= 0, i, i + int64(len(n)), nil
	}
	if !where {
		return s.re.Match(c), 0, 0, nil
	}
	if loc := s.re.FindIndex(c); loc != nil {
		return true, int64(loc[0]), int64(loc[1]), nil
	}
	return false, 0, 0, nil
}

// matchStreamed is match for a streamed line, using what reading through
// it found: where each needle and the prefix first occur (in the line with
// its "\r", if any: an occurrence that reaches past ll.end is not in the
// line, and then neither is any later one).
func (s *searcher) matchStreamed(ll *longLine, where bool) (ok bool, from, to int64, err error) {
	size := ll.end - ll.start
	if s.pf.needles != nil && !slices.ContainsFunc(ll.needleAt, func(at int64) bool { return at >= 0 }) {
		return false, 0, 0, nil
	}
	if s.pf.exact {
		from = ll.needleAt[0] - ll.start
		to = from + int64(len(s.pf.needles[0]))
		return to <= size, from, to, nil
	}
	start := ll.start
	if s.pf.prefix != nil {
		// Every match starts with the prefix, and the program starts with
		// it: no thread of the regexp started before its first occurrence
		// survives, and one started there reads the prefix before any
		// assertion looks at what came before. So the leftmost match from
		// the line's start is the leftmost match from there.
		if ll.prefixAt < 0 {
			return false, 0, 0, nil
		}
		start = ll.prefixAt
	}
	s.rr.reset(s.r, start, ll.end, s.opts.chunk)
	if where {
		if loc := s.re.FindReaderIndex(&s.rr); loc != nil {
			ok, from, to = true, start-ll.start+int64(loc[0]), start-ll.start+int64(loc[1])
		}
	} else {
		ok = s.re.MatchReader(&s.rr)
	}
	// regexp takes a read error for the end of the text: the answer is only
	// true if the reader did not fail.
	if s.rr.err != nil {
		return false, 0, 0, s.rr.err
	}
	return ok, from, to, nil
}

// matchLine is what a result shows of l, a line whose leftmost match is
// [from, to) (relative to its start): the whole line when it fits in
// TextBytes, else a window of at most TextBytes around the match, cut at
// character boundaries, with its offset in the copy.
func (s *searcher) matchLine(l *line, from, to int64) (Line, error) {
	n, w := l.size(), int64(s.opts.TextBytes)
	if n <= w {
		return Line{Number: l.num, Offset: l.off, Text: utf8x.ValidString(l.content)}, nil
	}
	ws := windowStart(n, from, to, w)
	// The bytes around the window: three before its start, to find the
	// character it may split, and, as the start may move on by up to three
	// bytes, six after its end, to find where the last character ends.
	lo, hi := max(ws-(utf8.UTFMax-1), 0), min(ws+w+2*(utf8.UTFMax-1), n)
	var b []byte
	if l.long == nil {
		b = l.content[lo:hi]
	} else {
		if int64(cap(s.win)) < hi-lo {
			s.win = make([]byte, hi-lo)
		}
		b = s.win[:hi-lo]
		if _, err := readFull(s.r, b, l.off+lo); err != nil {
			return Line{}, err
		}
	}
	if inside, _, end := utf8x.Inside(b, int(ws-lo)); inside {
		ws = lo + int64(end)
	}
	t := b[ws-lo:]
	t = t[:utf8x.CutEnd(t, int(w), hi == n)]
	return Line{Number: l.num, Offset: l.off + ws, Text: utf8x.ValidString(t), Truncated: true}, nil
}

// windowStart places a window of w bytes in a line of n > w bytes around
// the match [from, to): centred on a match shorter than w, at the start of
// a longer one, and moved to stay inside the line. The caller moves the
// start on to a character boundary.
func windowStart(n, from, to, w int64) int64 {
	start := from
	if to-from < w {
		start = from - (w-(to-from))/2
	}
	return max(min(start, n-w), 0)
}

// line handles one line in the search. It returns false when the search
// is done, or failed (s.err).
func (s *searcher) line(l line) bool {
	var (
		matched  bool
		from, to int64
	)
	if !s.res.HasMore {
		var err error
		where := !s.opts.Count && l.size() > int64(s.opts.TextBytes)
		if matched, from, to, err = s.match(&l, where); err != nil {
			s.err = err
			return false
		}
	}
	if s.opts.Count {
		if matched {
			s.res.Count++
		}
		return true
	}
	if s.pending < len(s.res.Matches) {
		// l is after-context of every match since pending.
		rl := s.contextLine(&l)
		for i := s.pending; i < len(s.res.Matches); i++ {
			m := &s.res.Matches[i]
			m.After = append(m.After, rl)
			s.used += len(rl.Text)
		}
		for s.pending < len(s.res.Matches) && len(s.res.Matches[s.pending].After) >= s.opts.Context {
			s.pending++
		}
	}
	if matched {
		if s.opts.Max > 0 && len(s.res.Matches) >= s.opts.Max {
			s.res.HasMore, s.res.NextOffset = true, l.off
		} else {
			ml, err := s.matchLine(&l, from, to)
			if err != nil {
				s.err = err
				return false
			}
			m := Match{Line: ml}
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
	t, trunc := s.head(&l)
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

// block is a run of whole lines read from the copy, or one streamed line.
type block struct {
	at   int64     // offset of data[0]
	data []byte    // whole lines; only the range's last line may lack "\n"
	long *longLine // not nil: one line too long to hold, and no data
}

// longLine is a line longer than Options.lineMemory, found by reading
// through it once.
type longLine struct {
	start, end int64 // the line without its ending
	head       []byte
	// needleAt holds, for each of the prefilter's needles, the offset of
	// its first occurrence in the line (its "\r" included), or -1; prefixAt
	// the same for the prefix.
	needleAt []int64
	prefixAt int64
}

// blocks reads a range of the copy as blocks of whole lines, in chunks
// aligned to the chunk size, holding at most one chunk plus one line of up
// to lineMemory bytes; a longer line is read through (looking for the
// needles and the prefix on the way) and returned as a longLine.
type blocks struct {
	r        io.ReaderAt
	off, end int64 // next byte to read; end of the range
	mem      int   // lineMemory
	headLen  int
	chunk    int64  // read size: Options.chunk
	buf      []byte // buf[start:] is read but not yet returned
	start    int
	at       int64 // offset of buf[start]
	scanned  int   // bytes of buf[start:] known to hold no newline
	ll       longLine
	finders  []finder // one for each needle, then one for the prefix
}

func (s *searcher) newBlocks(from, end int64) *blocks {
	b := &blocks{r: s.r, off: from, end: end, at: from, mem: s.opts.lineMemory, headLen: s.opts.TextBytes + utf8.UTFMax,
		chunk: s.opts.chunk, buf: make([]byte, 0, 2*s.opts.chunk)}
	for _, n := range s.pf.needles {
		b.finders = append(b.finders, finder{needle: n, fold: s.pf.fold})
	}
	b.finders = append(b.finders, finder{needle: s.pf.prefix})
	return b
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
		if len(data) >= b.mem {
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

// longLine reads through the line whose first lineMemory bytes or more,
// without a newline, are buf[start:], and returns it as a longLine: where
// it starts and ends, its head, and where the needle first occurs in it.
func (b *blocks) longLine() (block, error) {
	piece := b.buf[b.start:]
	ll := &b.ll
	*ll = longLine{start: b.at, head: append(ll.head[:0], piece[:b.headLen]...), needleAt: ll.needleAt[:0]}
	for i := range b.finders {
		b.finders[i].reset()
	}
	at := b.at
	var last byte // the line's last byte so far
	for {
		i := bytes.IndexByte(piece, '\n')
		in := piece
		if i >= 0 {
			in = piece[:i]
		}
		for i := range b.finders {
			b.finders[i].feed(in, at)
		}
		if len(in) > 0 {
			last = in[len(in)-1]
		}
		if i >= 0 {
			ll.end = at + int64(i)
			if last == '\r' {
				ll.end--
			}
			// Go on after the newline, in the piece just read.
			b.start = len(b.buf) - len(piece) + i + 1
			b.at, b.scanned = at+int64(i+1), 0
			break
		}
		if b.off >= b.end {
			// The copy's last line: it keeps a final "\r".
			ll.end = b.end
			b.buf, b.start, b.at, b.scanned = b.buf[:0], 0, b.end, 0
			break
		}
		want := int(min(b.end-b.off, b.chunk-b.off%b.chunk))
		b.buf = b.buf[:want]
		if _, err := readFull(b.r, b.buf, b.off); err != nil {
			return block{}, err
		}
		piece, at = b.buf, b.off
		b.off += int64(want)
	}
	for _, f := range b.finders[:len(b.finders)-1] {
		ll.needleAt = append(ll.needleAt, f.found)
	}
	ll.prefixAt = b.finders[len(b.finders)-1].found
	return block{at: ll.start, long: ll}, nil
}

// finder looks for a needle in a line fed to it in pieces, including where
// it spans two pieces; in ASCII-lower-cased text when fold is true.
type finder struct {
	needle []byte
	fold   bool
	carry  []byte // the last len(needle)-1 bytes fed (lower-cased when fold)
	found  int64  // offset of the first occurrence, or -1
	low    []byte
	both   []byte
}

func (f *finder) reset() { f.carry, f.found = f.carry[:0], -1 }

// feed looks at p, the bytes of the line from offset at on, following the
// bytes fed before.
func (f *finder) feed(p []byte, at int64) {
	k := len(f.needle)
	if k == 0 || f.found >= 0 {
		return
	}
	if f.fold {
		f.low = lowerInto(f.low, p)
		p = f.low
	}
	if len(f.carry) > 0 {
		// An occurrence that starts in carry ends in p's first k-1 bytes.
		f.both = append(append(f.both[:0], f.carry...), p[:min(len(p), k-1)]...)
		if i := bytes.Index(f.both, f.needle); i >= 0 {
			f.found = at - int64(len(f.carry)) + int64(i)
			return
		}
	}
	if i := bytes.Index(p, f.needle); i >= 0 {
		f.found = at + int64(i)
		return
	}
	f.carry = append(f.carry, p[max(len(p)-(k-1), 0):]...)
	f.carry = f.carry[max(len(f.carry)-(k-1), 0):]
}

// runeReader reads the bytes [off, end) of a copy as runes, decoded as
// regexp decodes a []byte (utf8.DecodeRune on at least UTFMax bytes, or
// all that is left), so that re.FindReaderIndex over it answers as
// re.FindIndex over those bytes would. A read error ends the text: the
// caller checks err.
type runeReader struct {
	r        io.ReaderAt
	off, end int64
	chunk    int64
	buf      []byte
	p        int
	err      error
}

func (rr *runeReader) reset(r io.ReaderAt, start, end, chunk int64) {
	*rr = runeReader{r: r, off: start, end: end, chunk: chunk, buf: rr.buf[:0]}
}

// ReadRune returns the next rune and its width in bytes, io.EOF at the
// end, or the read error.
func (rr *runeReader) ReadRune() (rune, int, error) {
	for len(rr.buf)-rr.p < utf8.UTFMax && rr.off < rr.end {
		if err := rr.fill(); err != nil {
			rr.err = err
			return 0, 0, err
		}
	}
	if rr.p >= len(rr.buf) {
		return 0, 0, io.EOF
	}
	if c := rr.buf[rr.p]; c < utf8.RuneSelf {
		rr.p++
		return rune(c), 1, nil
	}
	r, n := utf8.DecodeRune(rr.buf[rr.p:])
	rr.p += n
	return r, n, nil
}

// fill keeps the unread bytes and reads the next chunk after them.
func (rr *runeReader) fill() error {
	want := min(rr.end-rr.off, rr.chunk-rr.off%rr.chunk)
	rest := len(rr.buf) - rr.p
	if int64(cap(rr.buf)) < int64(rest)+want {
		nb := make([]byte, rest, int64(rest)+max(want, rr.chunk))
		copy(nb, rr.buf[rr.p:])
		rr.buf = nb
	} else {
		rr.buf = rr.buf[:copy(rr.buf[:cap(rr.buf)], rr.buf[rr.p:])]
	}
	rr.p = 0
	p := rr.buf[rest : int64(rest)+want]
	if _, err := readFull(rr.r, p, rr.off); err != nil {
		return err
	}
	rr.buf = rr.buf[:int64(rest)+want]
	rr.off += want
	return nil
}
