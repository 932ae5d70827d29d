package preview

import (
	"strconv"
	"strings"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// level is how much the footer says. The budget picks the richest level
// whose longest possible footer takes at most half of it.
type level int

const (
	levelNone  level = iota // no footer: the head only
	levelTiny               // bytes cut and the continuing call
	levelShort              // bytes and lines, completeness, the call, the rule in a phrase
	levelFull               // everything, the rule in full
)

// numbers are what the footer counts in the data.
type numbers struct {
	size, lines          int64
	headEnd, headLines   int64
	headMid              bool // the head ends inside a line
	tailFirst, tailLines int64
	tailMid              bool // the tail starts inside a line
	omittedBytes         int64
	omittedLines         int64
}

// worstNumbers gives every number and choice its longest form, so that the
// footer rendered with them bounds the real one: every real number is at
// most max(size, lines).
func worstNumbers(s *source) numbers {
	m := max(s.size, s.lines, 2)
	return numbers{
		size: m, lines: m, headEnd: m, headLines: m, headMid: true,
		tailFirst: m, tailLines: m, tailMid: true, omittedBytes: m, omittedLines: m,
	}
}

func chooseLevel(s *source, budget int, f Footer) level {
	w := worstNumbers(s)
	for lv := levelFull; lv > levelNone; lv-- {
		if len(renderFooter(lv, f, w)) <= budget/2 {
			return lv
		}
	}
	return levelNone
}

// renderFooter writes the footer: lines of plain text in brackets, ending
// with a newline, addressed to the model. Numbers are plain decimals.
func renderFooter(lv level, f Footer, n numbers) string {
	var b strings.Builder
	switch lv {
	case levelTiny:
		tinyFooter(&b, f, n)
	case levelShort:
		shortFooter(&b, f, n)
	case levelFull:
		fullCounts(&b, n)
		fullStatus(&b, f)
		fullRecovery(&b, f, n)
	}
	return b.String()
}

// tinyFooter is one bracketed line: the bytes cut and the continuing call.
func tinyFooter(b *strings.Builder, f Footer, n numbers) {
	b.WriteString("[...")
	num(b, n.omittedBytes)
	b.WriteString(" bytes cut")
	if f.ID != "" {
		b.WriteString("; ")
		call(b, f, n.headEnd)
	} else {
		b.WriteString(", not saved")
	}
	b.WriteString("]\n")
}

// shortFooter is one bracketed line: bytes and lines, completeness, the
// call and the rule in a phrase.
func shortFooter(b *strings.Builder, f Footer, n numbers) {
	b.WriteString("[... ")
	num(b, n.omittedBytes)
	b.WriteString(" bytes (")
	num(b, n.omittedLines)
	b.WriteString(" lines) not shown")
	if f.ID == "" {
		b.WriteString(" and not saved: they cannot be read back; say uncertain, not absent.]\n")
		return
	}
	if !f.Complete {
		b.WriteString("; copy incomplete")
	}
	b.WriteString(". Continue: ")
	call(b, f, n.headEnd)
	b.WriteString(". Read it before saying anything is absent.]\n")
}

// fullCounts opens the full footer: what is not shown, of how much, and
// which lines stand above and below it.
func fullCounts(b *strings.Builder, n numbers) {
	b.WriteString("[... ")
	num(b, n.omittedBytes)
	b.WriteString(" bytes (")
	num(b, n.omittedLines)
	b.WriteString(" whole lines) not shown here, of ")
	num(b, n.size)
	b.WriteString(" bytes in ")
	num(b, n.lines)
	b.WriteString(" lines. Above: ")
	lineRange(b, 1, n.headLines, n.headLines)
	if n.headMid {
		b.WriteString(" (cut mid-line)")
	}
	b.WriteString("; below: ")
	lineRange(b, n.tailFirst, n.lines, n.tailLines)
	if n.tailMid {
		b.WriteString(" (from mid-line)")
	}
	b.WriteString(".\n")
}

// fullStatus says how the tool ended and what the copy itself lacks, when
// either is worth saying.
func fullStatus(b *strings.Builder, f Footer) {
	if f.Status != "" {
		b.WriteString("Status: ")
		b.WriteString(f.Status)
		b.WriteString(".\n")
	}
	if f.Gap != nil && f.Gap.Bytes > 0 {
		b.WriteString("The copy itself lacks ")
		num(b, f.Gap.Bytes)
		b.WriteString(" bytes (")
		num(b, f.Gap.Lines)
		b.WriteString(" lines) the tool produced, at offset ")
		num(b, f.Gap.Offset)
		b.WriteString(".\n")
	}
}

// fullRecovery closes the full footer: how to read the rest, or why it
// cannot be read, and the rule in full.
func fullRecovery(b *strings.Builder, f Footer, n numbers) {
	if f.ID != "" {
		if f.Complete {
			b.WriteString("The retained copy is complete. Read on with ")
		} else {
			b.WriteString("The retained copy is incomplete (complete=false): it may lack part of what the tool produced. Read it with ")
		}
		call(b, f, n.headEnd)
		b.WriteString(", following nextOffset until hasMore is false.\n")
		outline(b, f)
		b.WriteString("A preview is not the whole result: before saying a line, field or record is absent, read the copy and check the source's own pagination; if you cannot get the evidence, say it is uncertain, not absent.]\n")
		return
	}
	b.WriteString("Recovery unavailable: ")
	if f.Unavailable != "" {
		b.WriteString("the output could not be saved (")
		b.WriteString(f.Unavailable)
		b.WriteString(")")
	} else {
		b.WriteString("no copy of the output was kept")
	}
	b.WriteString(", so the bytes not shown cannot be read back.\n")
	b.WriteString("A preview is not the whole result: never say something is absent because it is not shown; check the source's own pagination or filters, and if you cannot get the evidence, say it is uncertain.]\n")
}

func num(b *strings.Builder, n int64) {
	var a [20]byte
	b.Write(strconv.AppendInt(a[:0], n, 10))
}

// lineRange writes lines first to last, count of them ("nothing" for none).
func lineRange(b *strings.Builder, first, last, count int64) {
	switch {
	case count <= 0:
		b.WriteString("nothing")
	case count == 1:
		b.WriteString("line ")
		num(b, first)
	default:
		b.WriteString("lines ")
		num(b, first)
		b.WriteByte('-')
		num(b, last)
	}
}

// call writes the continuing call, its arguments as JSON.
func call(b *strings.Builder, f Footer, offset int64) {
	b.WriteString(f.ReadTool)
	b.WriteString(` {"id":`)
	jsonString(b, f.ID)
	b.WriteString(`,"offset":`)
	num(b, offset)
	b.WriteByte('}')
}

// jsonString writes s, valid UTF-8, as a JSON string.
func jsonString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xF])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// clean makes the caller's strings safe to show: valid UTF-8, one line,
// reasons and statuses cut short. The id is kept whole (a cut id would make
// a wrong call); an absurdly long one only makes the footer shorter.
func (f Footer) clean() Footer {
	f.ID = strings.ToValidUTF8(f.ID, "\uFFFD")
	f.Outline = cleanOutline(f.Outline)
	f.Unavailable = oneLine(f.Unavailable, 200)
	f.Status = strings.TrimRight(oneLine(f.Status, 120), ".")
	if f.ReadTool = oneLine(f.ReadTool, 64); f.ReadTool == "" {
		f.ReadTool = ReadTool
	}
	if f.Gap != nil && (f.Gap.Bytes < 0 || f.Gap.Lines < 0 || f.Gap.Offset < 0) {
		f.Gap = nil // a gap that cannot be is not shown
	}
	return f
}

// oneLine returns s as valid UTF-8 on one line, control characters as
// spaces, at most max bytes (cut at a character, ending "...").
func oneLine(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) <= max {
		return s
	}
	return utf8x.Cut(s, max-3) + "..."
}
