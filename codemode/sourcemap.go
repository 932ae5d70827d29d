package codemode

import (
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// sourceMap maps positions in the JavaScript esbuild made back to the
// wrapped code as written. goja's own reading of a source map takes the
// nearest mapping before a position even on an earlier line, and gives
// its column in UTF-16 units; this one stays on the position's line,
// counts from the mapping to the position where esbuild left the text
// as it was, and gives columns in characters.
type sourceMap struct {
	gen   []string    // the generated source, by line
	src   []jsLine    // the wrapped source, by JavaScript's lines
	lines [][]segment // the mappings of each generated line, by column
}

// jsLine is a line of source as JavaScript (and so esbuild, in its source
// map and its errors) counts lines: ended by "\n", "\r\n", "\r", U+2028
// or U+2029. The model counts lines ended by "\n" only: nl is the 0-based
// index of the "\n" line it is part of, col the characters before it in
// that line.
type jsLine struct {
	text    string
	nl, col int
}

// jsLines splits src into JavaScript's lines.
func jsLines(src string) []jsLine {
	var out []jsLine
	nl, col, start := 0, 0, 0
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRuneInString(src[i:])
		end := -1 // where the terminator ends, when there is one at i
		switch r {
		case '\n', '\u2028', '\u2029':
			end = i + size
		case '\r':
			end = i + 1
			if strings.HasPrefix(src[end:], "\n") {
				end++
			}
		}
		if end < 0 {
			i += size
			continue
		}
		text := src[start:i]
		out = append(out, jsLine{text: text, nl: nl, col: col})
		if src[end-1] == '\n' {
			nl, col = nl+1, 0
		} else {
			col += utf8.RuneCountInString(src[start:end])
		}
		start, i = end, end
	}
	return append(out, jsLine{text: src[start:], nl: nl, col: col})
}

// nlPos turns a JavaScript line (0-based) and a character column in it
// into the "\n" line (1-based) and the character column (0-based) in it;
// ok is false past the last line.
func nlPos(lines []jsLine, line, column int) (wrappedPos, bool) {
	if line < 0 || line >= len(lines) {
		return wrappedPos{}, false
	}
	return wrappedPos{lines[line].nl + 1, lines[line].col + column}, true
}

// segment is one mapping: 0-based, columns in UTF-16 units as source
// maps count them.
type segment struct{ genCol, srcLine, srcCol int }

// parseSourceMap reads esbuild's source map (version 3, one source) of
// gen, made from src.
func parseSourceMap(raw []byte, gen, src string) *sourceMap {
	var v struct {
		Mappings string `json:"mappings"`
	}
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	m := &sourceMap{gen: strings.Split(gen, "\n"), src: jsLines(src)}
	// Each field is relative to the one before; the source index (the
	// second) is always 0, the one source.
	var srcLine, srcCol int
	for _, line := range strings.Split(v.Mappings, ";") {
		var segs []segment
		genCol := 0
		for _, seg := range strings.Split(line, ",") {
			f := decodeVLQ(seg)
			if len(f) < 4 {
				if len(f) > 0 {
					genCol += f[0]
				}
				continue
			}
			genCol += f[0]
			srcLine += f[2]
			srcCol += f[3]
			segs = append(segs, segment{genCol, srcLine, srcCol})
		}
		m.lines = append(m.lines, segs)
	}
	return m
}

// decodeVLQ decodes one segment's base64 VLQ fields; nil when malformed.
func decodeVLQ(s string) []int {
	var out []int
	shift, value := 0, 0
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", s[i])
		if d < 0 {
			return nil
		}
		value += (d & 31) << shift
		if d&32 != 0 {
			shift += 5
			continue
		}
		if value&1 != 0 {
			out = append(out, -(value >> 1))
		} else {
			out = append(out, value>>1)
		}
		shift, value = 0, 0
	}
	return out
}

// original maps a generated position (line 1-based, column a 0-based
// byte offset, as goja counts) to the wrapped source: line 1-based,
// column 0-based in characters. ok is false when the line has no
// mapping at or before the column.
func (m *sourceMap) original(line, byteCol int) (wrappedPos, bool) {
	if m == nil || line < 1 || line > len(m.lines) || line > len(m.gen) {
		return wrappedPos{}, false
	}
	genLine := m.gen[line-1]
	col := utf16Len(genLine[:min(max(byteCol, 0), len(genLine))])
	var seg *segment
	for i := range m.lines[line-1] {
		if s := &m.lines[line-1][i]; s.genCol <= col {
			seg = s
		}
	}
	if seg == nil || seg.srcLine >= len(m.src) {
		return wrappedPos{}, false
	}
	src := m.src[seg.srcLine].text
	at := byteOfUTF16(src, seg.srcCol)
	// Where esbuild copied the text from the mapping to the position as
	// it was, the position is as far past the mapping in the source.
	from := byteOfUTF16(genLine, seg.genCol)
	to := byteOfUTF16(genLine, col)
	if strings.HasPrefix(src[at:], genLine[from:to]) {
		at += to - from
	}
	return nlPos(m.src, seg.srcLine, utf8.RuneCountInString(src[:at]))
}

// utf16Len is the length of s in UTF-16 units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// byteOfUTF16 is the byte offset in s of the UTF-16 column col (the end
// of s when past it).
func byteOfUTF16(s string, col int) int {
	n := 0
	for i, r := range s {
		if n >= col {
			return i
		}
		n += utf16.RuneLen(r)
	}
	return len(s)
}
