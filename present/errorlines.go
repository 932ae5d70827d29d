package present

import (
	"bytes"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// ErrorLine is a line of a copy that looks like an error, for a footer:
// its 1-based number, the offset where it starts (a read offset) and its
// text, cut short.
type ErrorLine struct {
	Line   int64
	Offset int64
	Text   string
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
	for start < to && len(out) < max {
		end := start + int64(lineLen(data[start:to]))
		if looksLikeError(data[start:end]) {
			text := bytes.TrimRight(data[start:end], "\r\n")
			out = append(out, ErrorLine{Line: line, Offset: start, Text: OneLine(utf8x.ValidString(utf8x.Cut(text, 4*ErrorLineTextMax)), ErrorLineTextMax)})
		}
		start = end
		line++
	}
	return out
}

// lineLen is the length of the first line of b, its newline included.
func lineLen(b []byte) int {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return i + 1
	}
	return len(b)
}

// looksLikeError reports whether a word of l starts with one of errorWords,
// in any case.
func looksLikeError(l []byte) bool {
	for i := 0; i < len(l); i++ {
		c := l[i] | 0x20 // ASCII lower case; other bytes never match below
		if c != 'e' && c != 'f' && c != 'p' && c != 't' {
			continue
		}
		if i > 0 && isWordByte(l[i-1]) {
			continue
		}
		for _, w := range errorWords {
			if w[0] == c && hasPrefixFold(l[i:], w) {
				return true
			}
		}
	}
	return false
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
