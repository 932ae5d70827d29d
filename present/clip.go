package present

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// Clip shortens s to at most max bytes: s itself when it fits, else a start
// of s and the cut mark, "…(N bytes cut)", which says how much is missing.
// It is the one way scrollback shortens a label, a message or a quoted
// argument. The cut falls on a character boundary, and at the end of a word
// when one ends in the last quarter of what is kept, so that no word is
// left half; it never makes invalid UTF-8 out of valid UTF-8. When max is
// too small even for the mark, s is cut to max bytes with no mark.
func Clip(s string, max int) string {
	if len(s) <= max {
		return s
	}
	max = maxClip(max)
	keep := max - len(mark(len(s)))
	if keep <= 0 {
		return utf8x.Cut(s, max)
	}
	head := wordCut(utf8x.Cut(s, keep))
	return head + mark(len(s)-len(head))
}

// ClipMiddle is Clip keeping both ends of s around the cut mark: for a path
// or a command line, whose end says as much as its start.
func ClipMiddle(s string, max int) string {
	if len(s) <= max {
		return s
	}
	max = maxClip(max)
	keep := max - len(mark(len(s)))
	if keep <= 1 {
		return utf8x.Cut(s, max)
	}
	head := utf8x.Cut(s, keep-keep/2)
	tail := utf8x.Tail(s, keep/2)
	return head + mark(len(s)-len(head)-len(tail)) + tail
}

// mark is the cut mark for n bytes cut.
func mark(n int) string { return "…(" + strconv.Itoa(n) + " bytes cut)" }

// wordCut moves the end of a cut start of a text back to the end of a word
// (before a space or after punctuation) when one lies in its last quarter.
func wordCut(s string) string {
	lo := len(s) - len(s)/4
	for i := len(s); i > lo && i > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if r == ' ' || r == '\t' {
			return strings.TrimRight(s[:i-size], " \t")
		}
		if strings.ContainsRune(",;.:)]}", r) && i < len(s) {
			return s[:i]
		}
		i -= size
	}
	return s
}

// OneLine makes s one line of valid UTF-8 for a text: control characters as
// spaces, surrounding space trimmed, at most max bytes (Clip).
func OneLine(s string, max int) string {
	return Clip(strings.TrimSpace(oneLineRunes(s)), max)
}

// oneLineRunes is s as valid UTF-8 with control characters as spaces.
func oneLineRunes(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// maxClip takes a negative bound as 0.
func maxClip(n int) int { return max(n, 0) }
