package greptest

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
)

// source reads a fuzzer's bytes as a sequence of choices; past their end
// every choice is 0.
type source struct {
	b []byte
	i int
}

func (s *source) next() int {
	if s.i >= len(s.b) {
		return 0
	}
	c := s.b[s.i]
	s.i++
	return int(c)
}

func (s *source) more() bool { return s.i < len(s.b) }

func (s *source) pick(from []string) string { return from[s.next()%len(from)] }

// Literals are the texts patterns and copies share, so that patterns match:
// numbers (the seq cases), letters whose case folds leave ASCII (k to
// U+212A KELVIN SIGN, s to U+017F LONG S, ß to U+1E9E), multi-byte text,
// U+FFFD (which also matches invalid bytes), a JSON key, a carriage
// return.
var Literals = []string{
	"5000", "1", "0", "50001", "a", "ab", "A", "é", "É", "k", "K", "\u212A", "s", "S", "\u017F",
	"ß", "\u1E9E", "日本", "😀", "\uFFFD", "NEEDLE-777", "needle", `"id"`, ":", " ", "-", "x", "\r", "\t",
}

var anchors = []string{`^`, `$`, `\A`, `\z`, `\b`, `\B`, `(?m:^)`, `(?m:$)`}

var classes = []string{
	`.`, `[a-z]`, `[0-9]`, `[^a]`, `\d`, `\D`, `\w`, `\W`, `\s`, `\S`, `[é-ü]`, `\pL`, `[[:alpha:]]`,
	`[^\x00-\x7f]`, `(?s:.)`, `[\r]`, `[kK]`, `\x{FFFD}`, `[^\n]`, `\x00`,
}

var repeats = []string{`*`, `+`, `?`, `{2}`, `{1,3}`, `{0,2}`, `*?`, `+?`, `{3,}`}

// Pattern builds an RE2 pattern from b by a grammar of literals, anchors
// (^ $ \A \z \b \B and their multi-line forms), classes, concatenation,
// alternation, repetition, groups and case folding ((?i) and (?i:...)).
// Every pattern it builds compiles; no input is an empty pattern's only
// source (b empty gives "", which matches every line).
func Pattern(b []byte) string {
	s := &source{b: b}
	var sb strings.Builder
	for n := 0; s.more() && n < 6; n++ {
		node(s, &sb, 0)
	}
	return sb.String()
}

// PatternOf returns the pattern a fuzz input names: the rest of b as
// written when b starts with '=' (how seeds spell the cases of a bug
// report), else Pattern(b). ok is false when the pattern does not compile.
func PatternOf(b []byte) (re *regexp.Regexp, ok bool) {
	expr := Pattern(b)
	if len(b) > 0 && b[0] == '=' {
		expr = string(b[1:])
	}
	re, err := regexp.Compile(expr)
	return re, err == nil
}

func node(s *source, sb *strings.Builder, depth int) {
	kind := s.next() % 9
	if depth >= 4 {
		kind %= 3
	}
	switch kind {
	case 0:
		sb.WriteString(regexp.QuoteMeta(s.pick(Literals)))
	case 1:
		sb.WriteString(s.pick(anchors))
	case 2:
		sb.WriteString(s.pick(classes))
	case 3:
		node(s, sb, depth+1)
		node(s, sb, depth+1)
	case 4:
		sb.WriteString("(?:")
		node(s, sb, depth+1)
		sb.WriteByte('|')
		node(s, sb, depth+1)
		sb.WriteByte(')')
	case 5:
		sb.WriteString("(?:")
		node(s, sb, depth+1)
		sb.WriteString(")" + s.pick(repeats))
	case 6:
		sb.WriteByte('(')
		node(s, sb, depth+1)
		sb.WriteByte(')')
	case 7:
		sb.WriteString("(?i:")
		node(s, sb, depth+1)
		sb.WriteByte(')')
	case 8:
		sb.WriteString("(?i)")
		node(s, sb, depth+1)
	}
}

// MaxCopy bounds what Copy makes with big set: 6 MiB, under the 8 MiB
// copy cap.
const MaxCopy = 6 << 20

// Copy builds a copy of lines from b. b's first byte says whether the last
// line ends with "\n" (even) or not (odd); then each choice adds a line:
// empty; ASCII; multi-byte text with invalid bytes; one of Literals inside
// other text; numbers one a line (up to `seq 1 131070`); one long line of
// JSON-like records (up to 64 KiB, or with big and a choice of 0 mod 4 up
// to 6 MiB) with a literal at a chosen place or straddling a 64 KiB
// boundary of the copy;
// a line ending in "\r\n"; invalid UTF-8.
func Copy(b []byte, big bool) []byte {
	s := &source{b: b}
	open := s.next()%2 == 1
	var buf bytes.Buffer
	limit := MaxCopy
	if !big {
		limit = 1 << 20
	}
	for s.more() && buf.Len() < limit {
		r := rand.New(rand.NewPCG(uint64(s.next()), uint64(s.next())))
		switch s.next() % 8 {
		case 0:
			buf.WriteByte('\n')
		case 1:
			const ascii = "abcxyzABCKS01 5:-_\t\"{}"
			for range r.IntN(80) {
				buf.WriteByte(ascii[r.IntN(len(ascii))])
			}
			buf.WriteByte('\n')
		case 2:
			runes := []string{"é", "É", "ü", "\u212A", "\u017F", "ß", "日", "😀", "\uFFFD", "a", "k", "s", " ", "\xff", "\xc3", "\xe2\x82", "\xed\xa0\x80"}
			for range r.IntN(60) {
				buf.WriteString(runes[r.IntN(len(runes))])
			}
			buf.WriteByte('\n')
		case 3:
			around := []string{"", "x", "5", "1", " ", "é", "_", "-"}
			buf.WriteString(around[r.IntN(len(around))] + s.pick(Literals) + around[r.IntN(len(around))] + "\n")
		case 4:
			from, n := s.next()*400+1, s.next()+1
			if from == 1 {
				n = (s.next()<<8 | s.next()) * 2
			}
			for i := from; i < from+n && buf.Len() < limit; i++ {
				buf.WriteString(strconv.Itoa(i) + "\n")
			}
		case 5:
			n := s.next()<<8 | s.next()
			if big && s.next()%4 == 0 {
				n *= 96
			}
			n = min(n, limit-buf.Len())
			needle, where := s.pick(Literals), s.next()
			longLine(&buf, n, needle, where)
			buf.WriteByte('\n')
		case 6:
			buf.WriteString(s.pick(Literals) + "\r\n")
		case 7:
			bad := []string{"\xff", "a\xffb", "\xc3", "\xc3(", "\xe2\x82", "\xf0\x9f\x98", "\xed\xa0\x80", "\xc0\xaf", "\xef\xbf\xbd"}
			buf.WriteString(bad[r.IntN(len(bad))] + "\n")
		}
	}
	out := buf.Bytes()
	if open && len(out) > 0 && out[len(out)-1] == '\n' {
		out = out[:len(out)-1]
	}
	return out
}

// longLine writes one line of n bytes or a little more, JSON-like records
// (no newline) with needle in it: at where/250 of the way when where <=
// 250 (the very end at 250), else straddling the first 64 KiB boundary of
// the copy past the line's middle. The record the needle lands in is cut
// where it lands, so the needle may follow half a character.
func longLine(buf *bytes.Buffer, n int, needle string, where int) {
	start := buf.Len()
	var at int
	if where <= 250 {
		at = start + n*where/250
	} else {
		mid := start + n/2
		at = min(max((mid/(64<<10)+1)*(64<<10)-len(needle)/2, start), start+n)
	}
	placed := false
	for id := 1; !placed || buf.Len() < start+n; id++ {
		if !placed && buf.Len() >= at {
			buf.Truncate(at)
			buf.WriteString(needle)
			placed = true
		}
		if buf.Len() < start+n {
			buf.WriteString(`{"id":` + strconv.Itoa(id) + `,"title":"issue ` + strconv.Itoa(id) + ` é","ok":true},`)
		}
	}
}

// OneLineJSON is a JSON document of about n bytes (n at least 4 MiB) on one
// line ending in "\n", as large API results are: records with NEEDLE-MID
// in the middle, NEEDLE-EDGE across the 64 KiB chunk boundary after 3 MiB
// (the boundary falls between "NEEDLE" and "-EDGE"), and NEEDLE-777 in the
// last record.
func OneLineJSON(n int) []byte {
	const chunk = 64 << 10 // store.ChunkSize
	var buf bytes.Buffer
	buf.WriteString(`{"items":[`)
	edge := (3<<20/chunk + 1) * chunk
	mid, atEdge := false, false
	for id := 1; buf.Len() < n; id++ {
		if !mid && buf.Len() >= n/2 {
			buf.WriteString(`{"id":"NEEDLE-MID"},`)
			mid = true
		}
		if !atEdge && buf.Len() >= edge-100 {
			buf.WriteString(strings.Repeat(" ", edge-buf.Len()-len(`{"id":"NEEDLE`)))
			buf.WriteString(`{"id":"NEEDLE-EDGE"},`)
			atEdge = true
		}
		buf.WriteString(`{"id":` + strconv.Itoa(id) + `,"title":"issue ` + strconv.Itoa(id) + ` é","ok":true},`)
	}
	buf.WriteString(`{"id":"NEEDLE-777"}]}` + "\n")
	return buf.Bytes()
}
