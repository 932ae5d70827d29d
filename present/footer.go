package present

import (
	"strings"
)

// Footer is what a preview's footer says besides the numbers of the cut:
// which copy holds the rest, in what state, and what else is worth knowing
// about the part not shown.
type Footer struct {
	// Surface decides how the footer names the calls that continue.
	Surface Surface
	// ID is the output_id of the retained copy; "" when none was saved.
	ID string
	// Unavailable says why the copy could not be saved; used when ID is "".
	Unavailable string
	// Complete reports whether the copy holds everything the tool
	// produced. Ignored when ID is "".
	Complete bool
	// Status is optional, e.g. "exit status 2", "killed by signal
	// SIGKILL": how the tool ended, shown as one sentence.
	Status string
	// Gap, when not nil, says where the copy itself lacks a run of the
	// bytes the tool produced.
	Gap *Gap
	// Outline, when not empty, is the shape of a copy that holds JSON
	// (jsonq's Outline.Text), at most OutlineBytes: the footer offers a
	// jq query of the copy and shows it.
	Outline string
	// Errors, when not nil, holds the error-like lines of the data found
	// before the cut was made (by a caller that searched while it saved
	// the copy): the cut lists those past its head and before its tail
	// instead of searching the data itself, provided its head ends at or
	// after Errors.From.
	Errors *ErrorScan
	// Whole, when not empty, names the copies that hold the whole output
	// this result only wraps (the copy of a command a Code Mode script
	// ran and returned): the footer points there first, and offers no jq
	// route into the wrapper.
	Whole []WholeCopy
}

// OutlineCut ends an outline that a small footer shows only the start of.
const OutlineCut = "  ... (outline cut: the footer has no room for the rest)\n"

// OutlineBytes bounds Footer.Outline.
const OutlineBytes = 1 << 10

// WholeCopy is a copy that holds a tool's whole output: its id, and what
// made it (the Code Mode call, the tool and, for a command, the command).
type WholeCopy struct {
	ID      string
	Call    int
	Tool    string
	Command string
}

// Cut holds the numbers of a preview's cut, which the footer states.
// Offsets count bytes of the data; lines count from 1.
type Cut struct {
	Size, Lines  int64 // the whole data
	HeadEnd      int64 // where the head stops: the offset that continues
	HeadLines    int64 // lines the head shows, in whole or in part: 1 to HeadLines
	HeadMid      bool  // the head ends inside a line
	TailFirst    int64 // the first line the tail shows
	TailLines    int64 // lines the tail shows
	TailMid      bool  // the tail starts inside a line
	OmittedBytes int64
	OmittedLines int64 // lines none of whose bytes is shown
	// Errors are the first error-like lines of the part not shown
	// (ErrorLines), when the data could be searched.
	Errors []ErrorLine
}

// WorstCut gives every number of a cut of data of size bytes in lines
// lines its longest form: a footer rendered with it is at least as long as
// with any real cut of that data (Errors aside).
func WorstCut(size, lines int64) Cut {
	m := max(size, lines, 2)
	return Cut{Size: m, Lines: m, HeadEnd: m, HeadLines: m, HeadMid: true, TailFirst: m, TailLines: m, TailMid: true, OmittedBytes: m, OmittedLines: m}
}

// MinRoom is the most bytes the shortest footer of f can take for data of
// size bytes in lines lines: the room a cut must leave for any footer.
func (f Footer) MinRoom(size, lines int64) int {
	f = f.clean()
	return len(f.tiny(WorstCut(size, lines)))
}

// Render returns the richest footer of f for the cut c that takes at most
// room bytes: plain text in brackets, ending with a newline, addressed to
// the model. It leaves out, in this order until it fits, the error-like
// lines, the JSON outline's lines from the last (saying that it is cut),
// the rest of the outline, the counts of lines and the rule in full; ""
// when even its shortest form does not fit.
func (f Footer) Render(c Cut, room int) string {
	f = f.clean()
	for errs := len(c.Errors); errs >= 0; errs-- {
		d := c
		d.Errors = c.Errors[:errs]
		if s := f.full(d, true); len(s) <= room {
			return s
		}
	}
	c.Errors = nil
	for _, o := range outlineCuts(f.Outline) {
		g := f
		g.Outline = o
		if s := g.full(c, true); len(s) <= room {
			return s
		}
	}
	for _, s := range []string{f.full(c, false), f.short(c), f.tiny(c)} {
		if len(s) <= room {
			return s
		}
	}
	return ""
}

// full is the footer in full: the counts, how the tool ended, what the
// copy lacks, how to read on, then (when outline) the error-like lines
// and the outline, then the rule.
func (f Footer) full(c Cut, outline bool) string {
	var b strings.Builder
	b.WriteString("[... " + itoa(c.OmittedBytes) + " bytes (" + Plural(c.OmittedLines, "whole line") + ") not shown, of " +
		itoa(c.Size) + " bytes in " + Plural(c.Lines, "line") + ". Above: ")
	lineRange(&b, 1, c.HeadLines, c.HeadLines)
	if c.HeadMid {
		b.WriteString(" (cut mid-line)")
	}
	b.WriteString("; below: ")
	lineRange(&b, c.TailFirst, c.Lines, c.TailLines)
	if c.TailMid {
		b.WriteString(" (from mid-line)")
	}
	b.WriteString(".\n")
	if f.Status != "" {
		b.WriteString("Status: " + f.Status + ".\n")
	}
	if f.Gap != nil && f.Gap.Bytes > 0 {
		b.WriteString(gapSentence(f.Gap) + "\n")
	}
	if f.ID == "" {
		b.WriteString(f.notSaved())
		// With no copy to read or search, the error-like lines are the
		// only words of the part not shown that the model can get: listed
		// without offsets, which nothing could read.
		if outline && len(c.Errors) > 0 {
			b.WriteString("\n")
			errorList(&b, c.Errors, false)
		} else {
			b.WriteString(" ")
		}
		b.WriteString("Narrow the source instead (grep or head in the command, its own filters or page tokens); never say something is absent because it is not shown: say it is uncertain.]\n")
		return b.String()
	}
	if f.Complete {
		b.WriteString("The retained copy is complete.")
	} else {
		b.WriteString("The retained copy is incomplete (complete=false): it lacks part of what the tool produced.")
	}
	b.WriteString(" Read on: " + f.Surface.Read(f.ID, c.HeadEnd) + "; search: " + f.Surface.Grep(f.ID) + ".\n")
	for _, w := range f.Whole {
		b.WriteString(wholeSentence(f.Surface, w) + "\n")
	}
	if outline && len(c.Errors) > 0 {
		errorList(&b, c.Errors, true)
	}
	if outline && f.Outline != "" && len(f.Whole) == 0 {
		b.WriteString("JSON: query it with " + f.Surface.Query(f.ID) + ". Outline (offset where each value starts):\n")
		b.WriteString(f.Outline)
	}
	b.WriteString(Rule + "]\n")
	return b.String()
}

// outlineCuts are the shorter forms of an outline a footer with little
// room tries, longest first, each ending with OutlineCut: first without
// the members of the root's members (the root's own keys say most, and a
// document's small trailing keys such as "summary" or "total" are often
// what is asked for), then that with its lines dropped from the end, to
// the root's line alone.
func outlineCuts(outline string) []string {
	if outline == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(outline, "\n"), "\n")
	var top []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "    ") {
			top = append(top, l)
		}
	}
	var cuts []string
	if len(top) < len(lines) {
		cuts = append(cuts, strings.Join(top, "\n")+"\n"+OutlineCut)
	}
	for n := len(top) - 1; n >= 1; n-- {
		cuts = append(cuts, strings.Join(top[:n], "\n")+"\n"+OutlineCut)
	}
	return cuts
}

// errorList lists the error-like lines not shown, each by its line
// number and, with offsets (when there is a copy to read them in), the
// offset where its text starts, as grep_tool_output's text gives a match
// (line:offset: text); a window of a longer line says so.
func errorList(b *strings.Builder, errs []ErrorLine, offsets bool) {
	if offsets {
		b.WriteString("Error-like lines not shown (line:offset: text):\n")
	} else {
		b.WriteString("Error-like lines not shown:\n")
	}
	for _, e := range errs {
		switch {
		case offsets:
			b.WriteString("  " + itoa(e.Line) + ":" + itoa(e.Offset))
			if e.Truncated {
				b.WriteString(" (part of a longer line)")
			}
		case e.Truncated:
			// Without a copy to read the rest in, the model must still
			// know it sees a window, not the whole line.
			b.WriteString("  line " + itoa(e.Line) + " (part of a longer line)")
		default:
			b.WriteString("  line " + itoa(e.Line))
		}
		b.WriteString(": " + e.Text + "\n")
	}
}

// short is one bracketed line: bytes and lines, completeness, the call and
// the rule in a phrase.
func (f Footer) short(c Cut) string {
	s := "[... " + itoa(c.OmittedBytes) + " bytes (" + Plural(c.OmittedLines, "whole line") + ") not shown"
	if f.ID == "" {
		return s + " and not saved: they cannot be read back; say uncertain, not absent.]\n"
	}
	if !f.Complete {
		s += "; copy incomplete"
	}
	return s + ". Read on: " + f.Surface.Read(f.ID, c.HeadEnd) + ". Read it before saying anything is absent.]\n"
}

// tiny is one bracketed line: the bytes cut and the continuing call.
func (f Footer) tiny(c Cut) string {
	if f.ID == "" {
		return "[... " + itoa(c.OmittedBytes) + " bytes cut, not saved]\n"
	}
	return "[... " + itoa(c.OmittedBytes) + " bytes cut; " + f.Surface.Read(f.ID, c.HeadEnd) + "]\n"
}

// notSaved says that no copy holds the bytes not shown, and why.
func (f Footer) notSaved() string {
	if f.Unavailable != "" {
		return "The output was not saved (" + f.Unavailable + "), so the bytes not shown cannot be read back."
	}
	return "The output was not saved, so the bytes not shown cannot be read back."
}

// wholeSentence points at a copy that holds the whole output a result
// wraps.
func wholeSentence(s Surface, w WholeCopy) string {
	what := "The whole output of call " + itoa(int64(w.Call)) + " (" + w.Tool
	if w.Command != "" {
		what += " `" + w.Command + "`"
	}
	return what + ") is copy " + w.ID + ": read it with " + s.Read(w.ID, 0) + " or search it, rather than this result."
}

// lineRange writes lines first to last, count of them ("nothing" for none).
func lineRange(b *strings.Builder, first, last, count int64) {
	switch {
	case count <= 0:
		b.WriteString("nothing")
	case count == 1:
		b.WriteString("line " + itoa(first))
	default:
		b.WriteString("lines " + itoa(first) + "-" + itoa(last))
	}
}

// clean makes the caller's strings safe to show: valid UTF-8, one line,
// reasons and statuses cut short (Clip). The ids are kept whole (a cut id
// would make a wrong call); an absurdly long one only makes the footer
// shorter.
func (f Footer) clean() Footer {
	f.ID = strings.ToValidUTF8(f.ID, "\uFFFD")
	f.Outline = cleanOutline(f.Outline)
	f.Unavailable = OneLine(f.Unavailable, 200)
	f.Status = strings.TrimRight(OneLine(f.Status, 120), ".")
	if f.Gap != nil && (f.Gap.Bytes < 0 || f.Gap.Lines < 0 || f.Gap.Offset < 0) {
		f.Gap = nil // a gap that cannot be is not shown
	}
	if len(f.Whole) > maxWhole {
		f.Whole = f.Whole[:maxWhole]
	}
	ws := make([]WholeCopy, 0, len(f.Whole))
	for _, w := range f.Whole {
		if w.ID == "" {
			continue
		}
		w.ID = strings.ToValidUTF8(w.ID, "\uFFFD")
		w.Tool = OneLine(w.Tool, 64)
		w.Command = OneLine(w.Command, 120)
		ws = append(ws, w)
	}
	f.Whole = ws
	return f
}

// maxWhole bounds the copies a footer points at.
const maxWhole = 3

// cleanOutline keeps an outline valid UTF-8, its lines free of control
// characters, within OutlineBytes and ending in a newline.
func cleanOutline(s string) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		l = l[:indent] + OneLine(l[indent:], OutlineBytes)
		if b.Len()+len(l)+1 > OutlineBytes {
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}
