// Package greptest holds the reference that grep's differential tests
// compare against, and the generators of their inputs: copies made of
// random lines and patterns built from a grammar of RE2.
//
// The reference is deliberately naive: it holds the whole copy, splits it
// into lines with bytes.Split and asks regexp.Match of each line. What it
// shows of a line (a whole line, a window around a match, a head) is
// computed from character boundaries found by decoding the line from its
// start, one utf8.DecodeRune at a time, sharing no code with grep.
package greptest

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Line is a line of a copy: its 1-based number, the offset of its start,
// and its bytes without "\n" and without a "\r" just before that "\n".
type Line struct {
	Number  int64
	Start   int64
	Content []byte
}

// Lines splits a copy into lines: a line ends at "\n"; a final line
// without "\n" is a line too; an empty copy has no lines.
func Lines(copy []byte) []Line {
	if len(copy) == 0 {
		return nil
	}
	parts := bytes.Split(copy, []byte("\n"))
	if copy[len(copy)-1] == '\n' {
		parts = parts[:len(parts)-1]
	}
	ls := make([]Line, len(parts))
	off := int64(0)
	for i, p := range parts {
		c := p
		terminated := off+int64(len(p)) < int64(len(copy))
		if terminated && len(c) > 0 && c[len(c)-1] == '\r' {
			c = c[:len(c)-1]
		}
		ls[i] = Line{Number: int64(i + 1), Start: off, Content: c}
		off += int64(len(p)) + 1
	}
	return ls
}

// Shown is what a result shows of a line.
type Shown struct {
	Number    int64
	Offset    int64 // where Text starts in the copy
	Text      string
	Truncated bool
}

// Match is a matching line with the lines around it.
type Match struct {
	Shown
	Before, After []Shown
}

// Matches returns every line of copy that re matches, as a result with
// textBytes shows it, with k context lines before and after each.
func Matches(copy []byte, re *regexp.Regexp, k, textBytes int) []Match {
	ls := Lines(copy)
	ms := []Match{}
	for i, l := range ls {
		if !re.Match(l.Content) {
			continue
		}
		loc := re.FindIndex(l.Content)
		m := Match{Shown: MatchShown(l, loc[0], loc[1], textBytes)}
		for j := max(0, i-k); j < i; j++ {
			m.Before = append(m.Before, Head(ls[j], textBytes))
		}
		for j := i + 1; j < len(ls) && j <= i+k; j++ {
			m.After = append(m.After, Head(ls[j], textBytes))
		}
		ms = append(ms, m)
	}
	return ms
}

// Count is the number of lines of copy, from the line starting at from
// on, that re matches.
func Count(copy []byte, re *regexp.Regexp, from int64) int64 {
	var n int64
	for _, l := range Lines(copy) {
		if l.Start >= from && re.Match(l.Content) {
			n++
		}
	}
	return n
}

// boundaries returns every offset of b where a character starts, and
// len(b): b decoded from its start, a valid sequence one character and any
// other byte one of its own.
func boundaries(b []byte) []int {
	var bs []int
	for i := 0; i < len(b); {
		bs = append(bs, i)
		_, size := utf8.DecodeRune(b[i:])
		i += size
	}
	return append(bs, len(b))
}

// valid is b with each byte that is not part of a valid sequence as U+FFFD.
func valid(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		sb.WriteRune(r) // RuneError for an invalid byte
		b = b[size:]
	}
	return sb.String()
}

// Head is what a context line shows: the whole line when it has at most w
// bytes, else its longest head of at most w bytes that ends on a
// character boundary.
func Head(l Line, w int) Shown {
	if len(l.Content) <= w {
		return Shown{l.Number, l.Start, valid(l.Content), false}
	}
	end := 0
	for _, b := range boundaries(l.Content) {
		if b <= w {
			end = b
		}
	}
	return Shown{l.Number, l.Start, valid(l.Content[:end]), true}
}

// MatchShown is what a match shows of a line whose leftmost match is
// [from, to): the whole line when it has at most w bytes; else a window:
// w bytes centred on a match shorter than w (starting at a longer match),
// kept inside the line, then its start moved on to the next character
// boundary and its end back to the last boundary at most w bytes after
// that start.
func MatchShown(l Line, from, to, w int) Shown {
	n := len(l.Content)
	if n <= w {
		return Shown{l.Number, l.Start, valid(l.Content), false}
	}
	start := from
	if to-from < w {
		start = from - (w-(to-from))/2
	}
	if start > n-w {
		start = n - w
	}
	if start < 0 {
		start = 0
	}
	bs := boundaries(l.Content)
	ws := -1
	for _, b := range bs {
		if b >= start {
			ws = b
			break
		}
	}
	we := ws
	for _, b := range bs {
		if b <= ws+w {
			we = b
		}
	}
	if from < ws || from > we {
		panic(fmt.Sprintf("greptest: window [%d, %d) misses the match at %d", ws, we, from))
	}
	return Shown{l.Number, l.Start + int64(ws), valid(l.Content[ws:we]), true}
}
