// Package utf8x holds the UTF-8 boundary rules every part of scrollback
// shares, so that a preview, a page of a retained copy and a page of a file
// agree on where characters begin and end.
//
// The rule: text is decoded left to right from offset 0; a valid UTF-8
// sequence is one character; every byte that is not part of a valid sequence
// (a stray continuation byte, a truncated or overlong sequence, a surrogate)
// is a one-byte character of its own, shown as U+FFFD. Offsets always count
// raw bytes.
//
// Because a valid sequence starts with a lead byte and continues only with
// continuation bytes, whether an offset is a boundary can be decided from the
// three bytes before it and the three after it, without decoding from 0.
package utf8x

import "unicode/utf8"

// Inside reports whether offset pos falls inside a multi-byte character of
// the text that window is a part of. window[base:] must hold the text from
// pos-3 (or the text's start) through pos+3 (or the text's end), with base
// the index in window of the text's byte at position pos. If pos is inside a
// character, start and end are the offsets (relative to window) of that
// character's first byte and of the byte just after it: the nearest valid
// offsets before and after pos.
func Inside(window []byte, base int) (inside bool, start, end int) {
	for q := base - 1; q >= 0 && q >= base-(utf8.UTFMax-1); q-- {
		c := window[q]
		if c < utf8.RuneSelf {
			return false, 0, 0 // an ASCII byte ends any sequence before it
		}
		if !utf8.RuneStart(c) {
			continue // a continuation byte: keep looking for its lead
		}
		r, size := utf8.DecodeRune(window[q:])
		if r == utf8.RuneError && size <= 1 {
			return false, 0, 0 // an invalid lead is a one-byte character
		}
		if q+size > base {
			return true, q, q + size
		}
		return false, 0, 0
	}
	return false, 0, 0
}

// CutEnd returns the largest n <= limit such that b[:n] ends on a character
// boundary, where b starts on a boundary. atEOF tells whether the text ends
// with b: when it does not, a sequence cut off by the end of b could still be
// a valid character, so CutEnd stops before it (b must then extend at least
// three bytes past limit, or to the text's end, for the answer to be exact).
//
// A negative limit is taken as 0.
func CutEnd(b []byte, limit int, atEOF bool) int {
	limit = max(limit, 0)
	if limit >= len(b) && atEOF {
		return len(b)
	}
	if limit > len(b) {
		limit = len(b)
	}
	// Step back from limit over at most three continuation bytes to the
	// start of the character that limit may split.
	for q := limit - 1; q >= 0 && q >= limit-(utf8.UTFMax-1); q-- {
		c := b[q]
		if c < utf8.RuneSelf {
			return limit
		}
		if !utf8.RuneStart(c) {
			continue
		}
		if !atEOF && !utf8.FullRune(b[q:]) {
			return q // cannot tell yet whether it is valid: leave it for later
		}
		r, size := utf8.DecodeRune(b[q:])
		if r == utf8.RuneError && size <= 1 {
			return limit // invalid lead: a one-byte character
		}
		if q+size > limit {
			return q
		}
		return limit
	}
	return limit
}

// ValidLen returns how many bytes AppendValid(nil, b) would produce: each
// byte that is not part of a valid sequence grows from one byte to three.
func ValidLen(b []byte) int {
	if utf8.Valid(b) {
		return len(b) // the common case, checked many bytes at a time
	}
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			n += len(string(utf8.RuneError))
		} else {
			n += size
		}
		b = b[size:]
	}
	return n
}

// AppendValid appends b to dst with every byte that is not part of a valid
// UTF-8 sequence replaced by U+FFFD, one replacement per byte.
func AppendValid(dst, b []byte) []byte {
	for len(b) > 0 {
		// Copy the longest valid run at once.
		i := 0
		for i < len(b) {
			if b[i] < utf8.RuneSelf {
				i++
				continue
			}
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		dst = append(dst, b[:i]...)
		if i == len(b) {
			break
		}
		dst = utf8.AppendRune(dst, utf8.RuneError)
		b = b[i+1:]
	}
	return dst
}

// ValidString is AppendValid into a new string.
func ValidString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return string(AppendValid(make([]byte, 0, len(b)+8), b))
}

// Cut returns the longest prefix of s that is at most n bytes long and ends
// on a character boundary: s itself when len(s) <= n. It is the one way
// scrollback shortens a string or a byte slice (a label, a message, a
// preview line), so that no shortened text ends in half a character. A byte
// that is not part of a valid sequence counts as a character of its own, as
// everywhere in this package. A negative n is taken as 0.
func Cut[T ~string | ~[]byte](s T, n int) T {
	if n >= len(s) {
		return s
	}
	n = max(n, 0)
	lo, hi := max(n-(utf8.UTFMax-1), 0), min(n+utf8.UTFMax-1, len(s))
	var w [2 * (utf8.UTFMax - 1)]byte
	k := copy(w[:], s[lo:hi])
	return s[:lo+CutEnd(w[:k], n-lo, hi == len(s))]
}

// Tail returns the longest suffix of s that is at most n bytes long and
// starts on a character boundary: s itself when len(s) <= n. It is Cut for
// the end of a text (the last lines of stderr, the end of a long path). A
// negative n is taken as 0.
func Tail[T ~string | ~[]byte](s T, n int) T {
	if n >= len(s) {
		return s
	}
	start := len(s) - max(n, 0)
	lo, hi := max(start-(utf8.UTFMax-1), 0), min(start+utf8.UTFMax-1, len(s))
	var w [2 * (utf8.UTFMax - 1)]byte
	k := copy(w[:], s[lo:hi])
	if inside, _, end := Inside(w[:k], start-lo); inside {
		start = lo + end
	}
	return s[start:]
}
