package present

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// ErrorLine is a line of a copy that looks like an error, for a footer:
// its 1-based number, the offset where Text starts (a read offset) and
// Text. A line of at most ErrorLineTextMax bytes is Text whole, from its
// start; of a longer one Text is a window around the error word, as
// grep_tool_output shows a match in a long line, and Truncated is set.
type ErrorLine struct {
	Line      int64
	Offset    int64
	Text      string
	Truncated bool
}

// Bounds of the error-like lines a footer lists.
const (
	MaxErrorLines    = 5   // lines listed at most
	ErrorLineTextMax = 160 // bytes of one line's text at most
)

// errorWords are the words that make a line look like an error, lower case;
// a line holds one when a word starts with it, in any case (ERROR,
// Failed, panic:, Traceback, ...).
var errorWords = [][]byte{[]byte("error"), []byte("fail"), []byte("panic"), []byte("exception"), []byte("traceback"), []byte("fatal")}

// ErrorLines returns the first lines of data that start in data[from:to]
// and look like errors (a word starting with error, fail, panic, exception,
// traceback or fatal, in any case), at most max of them, each with its line
// number and offset; line is the number of the line holding offset from. A
// line that starts before from (one a preview's head shows in part) is not
// listed. It reads each byte once and stops at the max-th line.
func ErrorLines(data []byte, from, to int64, line int64, max int) []ErrorLine {
	if from < 0 || to > int64(len(data)) || from >= to || max <= 0 {
		return nil
	}
	start := from
	if start > 0 && data[start-1] != '\n' {
		start += int64(lineLen(data[start:to])) // the rest of a line begun before from
		line++
	}
	var out []ErrorLine
	// One tight pass looks for a letter that starts a word and may start
	// an error word; lines are counted only from one find to the next. b
	// starts a line: no word runs into it.
	b := data[start:to]
	counted := 0
	for i := 0; i < len(b); i++ {
		if i = nextErrorWord(b, i); i == len(b) {
			break
		}
		lineStart := bytes.LastIndexByte(b[:i], '\n') + 1
		line += int64(bytes.Count(b[counted:lineStart], []byte{'\n'}))
		end := lineStart + lineLen(b[lineStart:])
		e := errorLine(b[lineStart:end], i-lineStart)
		e.Line, e.Offset = line, start+int64(lineStart)+e.Offset
		out = append(out, e)
		if len(out) == max || b[end-1] != '\n' {
			break // enough, or the last line, without a newline
		}
		// On to the next line.
		line++
		counted = end
		i = end - 1
	}
	return out
}

// errorLine is ErrorLine for the line l (its newline included) whose
// error word starts at l[at], its Offset relative to l's start. A long
// line shows a window of ErrorLineTextMax bytes at most that starts a
// little before the word, on a character boundary, and never in the
// spaces before one.
func errorLine(l []byte, at int) ErrorLine {
	l = bytes.TrimRight(l, "\r\n")
	if len(l) <= ErrorLineTextMax {
		return ErrorLine{Text: OneLine(utf8x.ValidString(l), ErrorLineTextMax)}
	}
	from := max(at-ErrorLineTextMax/4, 0)
	lo := max(from-(utf8.UTFMax-1), 0)
	if inside, _, end := utf8x.Inside(l[lo:min(len(l), from+utf8.UTFMax)], from-lo); inside {
		from = lo + end // on past the character the start fell in
	}
	for from < at && (l[from] == ' ' || l[from] == '\t') {
		from++
	}
	text := utf8x.Cut(l[from:min(len(l), from+ErrorLineTextMax+utf8.UTFMax)], ErrorLineTextMax)
	shown := strings.TrimRightFunc(oneLineRunes(utf8x.ValidString(text)), unicode.IsSpace)
	return ErrorLine{Offset: int64(from), Text: utf8x.Cut(shown, ErrorLineTextMax), Truncated: true}
}

// errorTable classes bytes for ErrorLines: 0 ends a word, 1 is part of
// one, startLetter is a letter an error word starts with (in either case).
var errorTable = func() (t [256]byte) {
	for c := range 256 {
		if isWordByte(byte(c)) {
			t[c] = 1
		}
	}
	for _, w := range errorWords {
		t[w[0]], t[w[0]-'a'+'A'] = startLetter, startLetter
	}
	return t
}()

const startLetter = 2

// Eight copies of a byte, and the high bit of each of eight bytes.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// zeros marks, with its high bit, each zero byte of v, and possibly bytes
// above one (the subtraction's borrow); never misses one.
func zeros(v uint64) uint64 { return (v - ones) &^ v & highs }

// nextErrorWord returns the index of the first byte of b at or after i
// that starts an error word at a word start (b[0], or a byte after one
// that is not a word byte), or len(b). Eight bytes at a time, by the
// error words' first two letters: an error word starts with er, fa, pa,
// ex or tr in some case, a pair that random bytes hold once in about
// 3,300 and a log's words rarely (the filter by first letter alone it
// replaces stopped at one byte in 32 of random bytes, and at most words of
// a log: BenchmarkErrorLinesRandom8MiB 9.8 -> 4.4 ms, BenchmarkErrorLines8MiB
// 6.2 -> 4.9 ms). The pairs are written out below; TestErrorWordsEveryCase
// fails when a word added to errorWords starts with another.
func nextErrorWord(b []byte, i int) int {
	for ; i+9 <= len(b); i += 8 {
		x := binary.LittleEndian.Uint64(b[i:]) | 0x2020202020202020 // lower case for letters
		y := binary.LittleEndian.Uint64(b[i+1:]) | 0x2020202020202020
		r := zeros(y ^ ones*'r')
		m := zeros(x^ones*'e')&(r|zeros(y^ones*'x')) |
			(zeros(x^ones*'f')|zeros(x^ones*'p'))&zeros(y^ones*'a') |
			zeros(x^ones*'t')&r
		// A marked byte may be a false one (the borrow): each is checked.
		for ; m != 0; m &= m - 1 {
			if k := i + bits.TrailingZeros64(m)/8; errorWordStart(b, k) {
				return k
			}
		}
	}
	for ; i < len(b); i++ {
		if errorWordStart(b, i) {
			break
		}
	}
	return i
}

// errorWordStart reports whether an error word starts at b[k], at a
// word start.
func errorWordStart(b []byte, k int) bool {
	return errorTable[b[k]] == startLetter && !wordBefore(b, k) && errorWordAt(b[k:])
}

// wordBefore reports whether the byte before b[k] is a word byte (none is
// before b[0]).
func wordBefore(b []byte, k int) bool {
	return k > 0 && errorTable[b[k-1]] != 0
}

// errorWordAt reports whether b starts with one of errorWords, in any case.
func errorWordAt(b []byte) bool {
	c := b[0] | 0x20
	for _, w := range errorWords {
		if w[0] == c && hasPrefixFold(b, w) {
			return true
		}
	}
	return false
}

// lineLen is the length of the first line of b, its newline included.
func lineLen(b []byte) int {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return i + 1
	}
	return len(b)
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// hasPrefixFold reports whether b starts with w (ASCII lower case) in any
// case.
func hasPrefixFold(b, w []byte) bool {
	if len(b) < len(w) {
		return false
	}
	for i, c := range w {
		if b[i]|0x20 != c {
			return false
		}
	}
	return true
}

// ErrorScan is the error-like lines of data that start at or after From:
// every such line up to a bound, the first lines of the rest.
type ErrorScan struct {
	From  int64
	Lines []ErrorLine
}

// ScanErrors searches data from offset from for error-like lines ahead of
// a cut whose head will end at or after from: it keeps MaxErrorLines more
// than the cut can list, so that those the head shows can be dropped.
func ScanErrors(data []byte, from int64) *ErrorScan {
	from = min(max(from, 0), int64(len(data)))
	line := int64(bytes.Count(data[:from], []byte{'\n'})) + 1
	return &ErrorScan{From: from, Lines: ErrorLines(data, from, int64(len(data)), line, scanMax)}
}

// scanMax is how many error-like lines a scan keeps.
const scanMax = 2*MaxErrorLines + scanSlack

// An ErrorScanner is ScanErrors done in steps while a copy is still being
// written, so that little is left to search once it is whole: Step reads
// a prefix of the copy as far as its last whole line, Finish the rest.
// A running command's settled head (capture.Settled) is such a prefix;
// searching 8 MiB after the command ended was the last step of its save.
// The zero value is not usable: use NewErrorScanner.
type ErrorScanner struct {
	scan ErrorScan
	next int64 // where the next step starts: From, then just past a newline
	line int64 // the number of the line holding next; 0 before the first step
}

// NewErrorScanner returns a scanner whose ErrorScan starts at from, as
// ScanErrors(data, from) does.
func NewErrorScanner(from int64) *ErrorScanner {
	from = max(from, 0)
	return &ErrorScanner{scan: ErrorScan{From: from}, next: from}
}

// Step searches prefix, a prefix of the copy (each step's at least as long
// as the last), from where the last step stopped to its last newline.
func (s *ErrorScanner) Step(prefix []byte) {
	if s == nil || len(s.scan.Lines) == scanMax || int64(len(prefix)) <= s.next {
		return
	}
	i := bytes.LastIndexByte(prefix[s.next:], '\n')
	if i < 0 {
		return
	}
	s.scanTo(prefix, s.next+int64(i)+1)
}

// scanTo searches data[s.next:end], end just past a newline or the end of
// the copy.
func (s *ErrorScanner) scanTo(data []byte, end int64) {
	if s.line == 0 {
		s.line = int64(bytes.Count(data[:s.next], []byte{'\n'})) + 1
	}
	s.scan.Lines = append(s.scan.Lines, ErrorLines(data, s.next, end, s.line, scanMax-len(s.scan.Lines))...)
	s.line += int64(bytes.Count(data[s.next:end], []byte{'\n'}))
	s.next = end
}

// Finish returns ScanErrors(data, from) for data, the whole copy, which
// starts with every prefix given to Step: it searches only what the steps
// have not. For another from, or a nil scanner, it searches data whole.
func (s *ErrorScanner) Finish(data []byte, from int64) *ErrorScan {
	if from = min(max(from, 0), int64(len(data))); s == nil || from != s.scan.From || s.next > int64(len(data)) {
		return ScanErrors(data, from)
	}
	if len(s.scan.Lines) < scanMax && s.next < int64(len(data)) {
		s.scanTo(data, int64(len(data)))
	}
	scan := s.scan
	scan.Lines = slices.Clone(scan.Lines)
	return &scan
}

// scanSlack is how many error-like lines ScanErrors keeps besides twice
// what a footer lists: room for those between its From and the head's
// end, which the head shows.
const scanSlack = 6

// Past returns the first MaxErrorLines lines of s that start at or after
// headEnd and before tailStart; ok is false when s cannot tell (headEnd
// before s.From, or every line s kept lies before tailStart and it may
// have missed some).
func (s *ErrorScan) Past(headEnd, tailStart int64) (lines []ErrorLine, ok bool) {
	if s == nil || headEnd < s.From {
		return nil, false
	}
	for _, l := range s.Lines {
		if l.Offset >= tailStart {
			return lines, true
		}
		if l.Offset >= headEnd {
			lines = append(lines, l)
			if len(lines) == MaxErrorLines {
				return lines, true
			}
		}
	}
	return lines, len(s.Lines) < 2*MaxErrorLines+scanSlack
}
