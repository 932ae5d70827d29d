package preview

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
	"github.com/scrollback-dev/scrollback/present"
)

// The contract's budgets.
const (
	// Budget is the preview budget of run_command and run_code: 24 KiB.
	// An output up to Budget is shown whole.
	Budget = 24576
	// HistoryBudget is the budget of results entering a conversation
	// history (proxied tools, the Go history helper): 32 KiB.
	HistoryBudget = 32768
	// ShownBudget is the most a result over its budget shows once it is
	// retained: head, footer and tail together, 1,280 bytes (the
	// contract's "shown when retained" is at most 8 KiB, the size chosen
	// by scrollback eval: the smallest at which no footer of the suite
	// says less than at 8 KiB, docs/eval.md). Its default split is
	// ShownHead bytes of head and ShownTail of tail, the rest left to the
	// footer.
	ShownBudget = 1280
	ShownHead   = (ShownBudget - ShownBudget*2/5) * 3 / 5   // 460
	ShownTail   = ShownBudget - ShownBudget*2/5 - ShownHead // 308
)

// Options sets the budgets of a preview and how it is split. The zero value
// gives Budget, shown whole or cut to Budget.
//
// Values are clamped, never rejected: a Budget of 0 or less means Budget; a
// Shown of 0 or less, or over Budget, means Budget. HeadBytes and TailBytes
// are cut down so that head, footer and tail fit together. A negative
// HeadBytes shows no head, a negative TailBytes no tail (the footer then
// comes first or last).
type Options struct {
	// Budget is the most bytes of data shown whole; <= 0 means Budget.
	Budget int
	// Shown is the most bytes of Text, footer included, when the data
	// does not fit Budget (ShownBudget once it is retained); <= 0 means
	// Budget. HeadBytes and TailBytes that ask for more than it leaves
	// beside the footer make it grow, up to Budget.
	Shown int
	// HeadBytes is the bytes of head wanted, < 0 for none; 0 = the
	// default split of Shown (9/25 of it: ShownHead of ShownBudget), or,
	// when TailBytes is given, what it leaves of the default head and tail
	// together.
	HeadBytes int
	// TailBytes is the bytes of tail wanted, < 0 for none; 0 = the default
	// split (6/25: ShownTail of ShownBudget), or what HeadBytes leaves.
	TailBytes int
}

// Split returns the default head and tail of a preview of shown bytes:
// 2/5 of it to the footer, and of the rest three fifths to the head, two to
// the tail.
func Split(shown int) (head, tail int) { return splitRoom(shown, footerRoom(shown)) }

// splitRoom splits what room for the footer leaves of shown bytes: three
// fifths to the head, two to the tail.
func splitRoom(shown, room int) (head, tail int) {
	rest := max(shown-room, 0)
	head = rest * 3 / 5
	return head, rest - head
}

// footerRoom is the room the default split leaves the footer: 2/5 of the
// preview, which at ShownBudget holds the shortest full footer (its counts,
// how to read on and the rule: about 480 bytes with a real id).
func footerRoom(shown int) int { return shown * 2 / 5 }

// maxFooterRoom is the most of a preview of shown bytes that the footer
// takes from the default head and tail: 7/8, so that at least an eighth
// shows the data itself. At the default 1,280 bytes a footer listing five
// error-like lines of a log needs more than 3/4 (the bound before
// 2026-12-07, which dropped the fifth): for a failing run those lines are
// worth more than a few more of its first and last.
func maxFooterRoom(shown int) int { return shown * 7 / 8 }

// Footer is what the footer says besides what Render counts in the data:
// present.Footer, the one place its words are written.
type Footer = present.Footer

// OutlineBytes bounds Footer.Outline.
const OutlineBytes = present.OutlineBytes

// Gap describes bytes the tool produced that the copy does not hold:
// present.Gap, the one gap type. Package capture reports it and results
// carry it, in the contract's JSON shape.
type Gap = present.Gap

// Preview is what Render returns. Offsets count raw bytes of the data; line
// numbers start at 1, and a final line without a newline counts as a line.
type Preview struct {
	// Text is the preview: valid UTF-8, never longer than the budget.
	Text string
	// Truncated reports that Text is not the whole data: it holds a head,
	// the footer and a tail.
	Truncated bool
	// HeadEnd is the offset where the head stops: the offset of the read
	// that continues. It is len(data) when the data is shown whole.
	HeadEnd int64
	// TailStart is the offset where the tail starts (len(data) when there
	// is no tail). HeadEnd <= TailStart.
	TailStart int64
	// HeadLines is how many lines the head shows, fully or in part: lines
	// 1 to HeadLines.
	HeadLines int64
	// TailLines is how many lines the tail shows, fully or in part: the last
	// TailLines lines.
	TailLines int64
	// OmittedBytes is TailStart-HeadEnd; OmittedLines counts the lines none
	// of whose bytes is shown.
	OmittedBytes, OmittedLines int64
	// TotalLines is the number of lines in the data.
	TotalLines int64
}

// Fits reports whether data is shown whole under budget: whether its valid
// UTF-8 form (each invalid byte shown as the three bytes of U+FFFD) is at
// most budget bytes. A budget of 0 or less means Budget. It costs O(budget)
// at most.
func Fits(data []byte, budget int) bool {
	if budget <= 0 {
		budget = Budget
	}
	return len(data) <= budget && utf8x.ValidLen(data) <= budget
}

// Render returns the preview of data, the retained copy or the whole output:
// data itself when it Fits, else a head, a footer and a tail within the
// budget. It never fails; see Options for how odd options are clamped.
func Render(data []byte, opts Options, f Footer) Preview {
	budget := budgetOf(opts)
	if Fits(data, budget) {
		return whole(data)
	}
	n := int64(len(data))
	w := int64(window(budget))
	src := source{
		size:    n,
		head:    data[:min(n, w)],
		tail:    data[max(0, n-w):],
		tailOff: max(0, n-w),
		lines:   countLines(data),
		data:    data,
	}
	return cut(src, opts, f)
}

// History cuts data for a conversation history: whole up to HistoryBudget,
// else cut to ShownBudget when f names a retained copy, to HistoryBudget
// when none could be saved.
func History(data []byte, f Footer) Preview {
	opts := Options{Budget: HistoryBudget}
	if f.ID != "" {
		opts.Shown = ShownBudget
	}
	return Render(data, opts, f)
}

// RenderAt is Render for data of size bytes read through r, such as a
// retained copy in a store. lines is the data's line count when known
// (store.CopyInfo.Lines), or -1 to have RenderAt count it, reading all of r
// in 64 KiB pieces. Otherwise it reads only the head and the tail, about
// twice the budget. It fails only when r does or when size or lines cannot
// be right; the error is an *Error wrapping ErrSize, ErrLines or ErrRead.
func RenderAt(r io.ReaderAt, size, lines int64, opts Options, f Footer) (Preview, error) {
	if size < 0 {
		return Preview{}, errorf(ErrSize, "give the length of the data, 0 or more", "size %d is negative", size)
	}
	budget := budgetOf(opts)
	if size <= int64(budget) {
		data := make([]byte, size)
		if err := readAt(r, data, 0); err != nil {
			return Preview{}, err
		}
		if lines >= 0 && lines != countLines(data) {
			return Preview{}, errorf(ErrLines, "pass -1 to have it counted", "%d lines given for data of %d lines", lines, countLines(data))
		}
		return Render(data, opts, f), nil
	}
	w := int64(window(budget))
	head := make([]byte, min(size, w))
	if err := readAt(r, head, 0); err != nil {
		return Preview{}, err
	}
	tailOff := max(0, size-w)
	tail := make([]byte, size-tailOff)
	if err := readAt(r, tail, tailOff); err != nil {
		return Preview{}, err
	}
	if lines < 0 {
		var err error
		if lines, err = countLinesAt(r, size); err != nil {
			return Preview{}, err
		}
	} else if lines > size || lines == 0 || lines < int64(bytes.Count(head, nl)) || lines < int64(bytes.Count(tail, nl)) {
		return Preview{}, errorf(ErrLines, "pass -1 to have it counted", "%d lines cannot be right for %d bytes", lines, size)
	}
	return cut(source{size: size, head: head, tail: tail, tailOff: tailOff, lines: lines}, opts, f), nil
}

func readAt(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return &Error{Err: ErrRead, Msg: "the data ends before its size", Hint: "give the size the reader holds",
			Cause: io.ErrUnexpectedEOF}
	}
	return &Error{Err: ErrRead, Cause: err}
}

func countLinesAt(r io.ReaderAt, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	var last byte
	for off := int64(0); off < size; {
		p := buf[:min(int64(len(buf)), size-off)]
		if err := readAt(r, p, off); err != nil {
			return 0, err
		}
		n += int64(bytes.Count(p, nl))
		last = p[len(p)-1]
		off += int64(len(p))
	}
	if size > 0 && last != '\n' {
		n++
	}
	return n, nil
}

var nl = []byte{'\n'}

// countLines counts newline-terminated lines, plus one for a final line
// without a newline (the rule of store.CopyInfo.Lines).
func countLines(b []byte) int64 {
	n := int64(bytes.Count(b, nl))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

func budgetOf(opts Options) int {
	if opts.Budget <= 0 {
		return Budget
	}
	return opts.Budget
}

// window is how many bytes of each end cut may look at: the most a part can
// take, plus room to tell whether a character straddles its edge.
func window(budget int) int { return budget + utf8.UTFMax }

func whole(data []byte) Preview {
	n, lines := int64(len(data)), countLines(data)
	return Preview{Text: utf8x.ValidString(data), HeadEnd: n, TailStart: n, HeadLines: lines, TotalLines: lines}
}

// source is the data as cut sees it: its first and last bytes.
type source struct {
	size    int64
	head    []byte // data[:len(head)]
	tail    []byte // data[tailOff:]
	tailOff int64
	lines   int64  // lines in the whole data
	data    []byte // the whole data, when held in memory (Render); nil for RenderAt
}

// at returns the data's byte at offset off, which must lie in one of the
// windows.
func (s *source) at(off int64) byte {
	if off < int64(len(s.head)) {
		return s.head[off]
	}
	return s.tail[off-s.tailOff]
}

// cut renders the preview of data that does not fit its budget: a head and
// a tail of the sizes asked (or of the default split), and between them the
// richest footer that fits what they leave of the shown size. The room
// always holds the footer's shortest form, unless the shown size is too
// small for any: then the head alone fills it.
func cut(s source, opts Options, f Footer) Preview {
	budget := budgetOf(opts)
	shown := opts.Shown
	if shown <= 0 || shown > budget {
		shown = budget
	}
	head, tail := parts(opts, shown)
	if want := head + tail + footerRoom(shown); want > shown {
		shown = min(want, budget) // the caller asked for more than the default shows
	}
	if footerGoesFirst(opts, shown, budget) {
		head, tail, f = footerFirst(&s, shown, f)
	}
	minRoom := f.MinRoom(s.size, s.lines) + 1 // the newline that may end a head cut mid-line
	if avail := shown - minRoom; head+tail > avail {
		tail = max(min(tail, avail-head), 0)
		head = max(min(head, avail), 0)
	}
	if p, slack, ok := layout(&s, shown, head, tail, f); ok {
		// At the full budget (no smaller shown size asked, as when no copy
		// could be saved) what the footer leaves goes back to a default
		// head and tail, split as they are, unless the footer would lose
		// more than a few digits for it.
		if shown == budget && opts.HeadBytes == 0 && opts.TailBytes == 0 && slack > slackMargin {
			more := slack - slackMargin
			if p2, slack2, ok := layout(&s, shown, head+more*3/5, tail+more-more*3/5, f); ok && footLen(p2, &s)+slackMargin >= footLen(p, &s) && slack2 >= 0 {
				return p2
			}
		}
		return p
	}
	// No footer fits: the head alone, with no tail, since nothing would
	// mark the gap.
	h := cutHead(&s, shown)
	p := Preview{Truncated: true, HeadEnd: h, TailStart: s.size, TotalLines: s.lines, OmittedBytes: s.size - h}
	p.HeadLines = headLines(&s, h)
	p.OmittedLines = max(0, s.lines-p.HeadLines)
	return assemble(&s, p, "")
}

// footerFirst returns the default head and tail of a preview of shown
// bytes, smaller than the default split when the richest footer needs
// more room (its counts, how to read on, where the whole output is, the
// error-like lines not shown, the JSON outline): a small preview is worth
// little without the way to the rest and its summary. The footer takes at
// most maxFooterRoom, so that an eighth at least shows the data itself.
// The footer it returns holds the error-like lines it found, so that the
// data is searched once.
func footerFirst(s *source, shown int, f Footer) (head, tail int, _ Footer) {
	h, t := splitRoom(shown, maxFooterRoom(shown))
	if f.Errors == nil && s.data != nil {
		f.Errors = present.ScanErrors(s.data, minHeadEnd(h))
	}
	room := footerRoom(shown)
	if p, _, ok := layout(s, shown, h, t, f); ok {
		if need := footLen(p, s) + slackMargin; need > room {
			room = min(need, maxFooterRoom(shown))
		}
	}
	head, tail = splitRoom(shown, room)
	return head, tail, f
}

// footerGoesFirst reports whether cut gives the footer its room first
// (footerFirst): for the default head and tail of a preview smaller than
// its budget.
func footerGoesFirst(opts Options, shown, budget int) bool {
	return opts.HeadBytes == 0 && opts.TailBytes == 0 && shown < budget
}

// HeadFrom is the smallest offset at which the head of a cut of data
// that does not fit opts can end, when the footer leaves the head as asked:
// where a search of the data for the footer may start.
func HeadFrom(opts Options) int64 {
	budget := budgetOf(opts)
	shown := opts.Shown
	if shown <= 0 || shown > budget {
		shown = budget
	}
	head, _ := parts(opts, shown)
	if footerGoesFirst(opts, shown, budget) {
		head, _ = splitRoom(shown, maxFooterRoom(shown)) // the footer first, at its largest
	}
	return minHeadEnd(head)
}

// minHeadEnd is the smallest offset of the data at which a head cut to
// head bytes (in its valid form) can end.
func minHeadEnd(head int) int64 {
	// A byte of data shows as at most 3 (an invalid one as U+FFFD), so the
	// head holds at least a third of its size in bytes of data (random
	// bytes come near), which a cut to a line end shortens by at most a
	// quarter. From head - head/4, as before 2026-12-04, the search of a
	// binary copy started past the head's end, and the cut searched all
	// 8 MiB again after the save.
	i := max(head-utf8.UTFMax, 0) / 3
	return int64(max(i-i/4-utf8.UTFMax, 0))
}

// parts returns the head and tail asked for by opts, or their defaults for
// a preview of shown bytes.
func parts(opts Options, shown int) (head, tail int) {
	dh, dt := Split(shown)
	leaves := func(other int) int { return max(shown-footerRoom(shown)-other, 0) }
	head, tail = max(opts.HeadBytes, 0), max(opts.TailBytes, 0)
	switch {
	case opts.HeadBytes == 0 && opts.TailBytes != 0:
		head = leaves(tail)
	case opts.HeadBytes == 0:
		head = dh
	}
	switch {
	case opts.TailBytes == 0 && opts.HeadBytes != 0:
		tail = leaves(head)
	case opts.TailBytes == 0:
		tail = dt
	}
	return head, tail
}

// headLines is the number of lines a head ending at h shows, in whole or in
// part.
func headLines(s *source, h int64) int64 {
	n := int64(bytes.Count(s.head[:h], nl))
	if h > 0 && s.at(h-1) != '\n' {
		n++
	}
	return n
}

// slackMargin is what a footer may grow by when its cut moves: a few more
// digits in its numbers.
const slackMargin = 64

// footLen is the length of p's footer.
func footLen(p Preview, s *source) int {
	return len(p.Text) - utf8x.ValidLen(s.head[:p.HeadEnd]) - utf8x.ValidLen(s.tail[p.TailStart-s.tailOff:])
}

// layout cuts a head of at most head bytes and a tail of at most tail
// bytes, counts what they leave out, and renders the footer in the room
// they leave of shown bytes; slack is the room the footer did not use, ok
// false when no footer fits.
func layout(s *source, shown, head, tail int, f Footer) (_ Preview, slack int, ok bool) {
	h := cutHead(s, head)
	t := cutTail(s, tail, h)
	p := Preview{Truncated: true, HeadEnd: h, TailStart: t, TotalLines: s.lines, OmittedBytes: t - h}
	p.HeadLines = headLines(s, h)
	tailFirst := s.lines + 1 // the first line the tail shows
	if t < s.size {
		tailFirst = s.lines - int64(bytes.Count(s.tail[t-s.tailOff:], nl))
		if s.at(s.size-1) == '\n' {
			tailFirst++
		}
		tailFirst = max(tailFirst, max(p.HeadLines, 1)) // only a wrong line count could break this
		p.TailLines = s.lines - tailFirst + 1
	}
	p.OmittedLines = max(0, tailFirst-p.HeadLines-1)
	headMid := h > 0 && s.at(h-1) != '\n'
	c := present.Cut{
		Size: s.size, Lines: s.lines,
		HeadEnd: h, HeadLines: p.HeadLines, HeadMid: headMid,
		TailFirst: tailFirst, TailLines: p.TailLines,
		TailMid:      t < s.size && t > 0 && s.at(t-1) != '\n',
		OmittedBytes: p.OmittedBytes, OmittedLines: p.OmittedLines,
	}
	if errs, ok := f.Errors.Past(h, t); ok {
		c.Errors = errs // searched while the copy was saved
	} else if s.data != nil {
		line := p.HeadLines // the line holding offset h
		if !headMid {
			line++
		}
		c.Errors = present.ErrorLines(s.data, h, t, line, present.MaxErrorLines)
	}
	room := shown - utf8x.ValidLen(s.head[:h]) - utf8x.ValidLen(s.tail[t-s.tailOff:])
	if headMid {
		room--
	}
	foot := f.Render(c, room)
	if foot == "" {
		return Preview{}, 0, false
	}
	return assemble(s, p, foot), room - len(foot), true
}

func assemble(s *source, p Preview, foot string) Preview {
	buf := make([]byte, 0, utf8x.ValidLen(s.head[:p.HeadEnd])+1+len(foot)+utf8x.ValidLen(s.tail[p.TailStart-s.tailOff:]))
	buf = utf8x.AppendValid(buf, s.head[:p.HeadEnd])
	if foot != "" {
		if p.HeadEnd > 0 && s.at(p.HeadEnd-1) != '\n' {
			buf = append(buf, '\n')
		}
		buf = append(buf, foot...)
	}
	buf = utf8x.AppendValid(buf, s.tail[p.TailStart-s.tailOff:])
	p.Text = string(buf)
	return p
}

// cutHead returns where a head of at most want bytes (in its valid form)
// ends: a character boundary, moved back to just after a newline when one
// lies within the last quarter of the head.
func cutHead(s *source, want int) int64 {
	b := s.head
	i, out := 0, 0
	for i < len(b) {
		if c := b[i]; c < utf8.RuneSelf {
			if out+1 > want {
				break
			}
			i++
			out++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		w := size
		if r == utf8.RuneError && size == 1 {
			w = len(string(utf8.RuneError))
		}
		if out+w > want {
			break
		}
		i += size
		out += w
	}
	// i <= want < len(b)-3 unless b is all the data, so DecodeRune always
	// saw a whole sequence and i is a boundary of the data.
	if i > 0 && int64(i) < s.size && b[i-1] != '\n' {
		if j := bytes.LastIndexByte(b[i-i/4:i], '\n'); j >= 0 {
			i = i - i/4 + j + 1
		}
	}
	return int64(i)
}

// cutTail returns where a tail of at most want bytes (in its valid form)
// starts: a character boundary not before headEnd, moved forward to just
// after a newline when one lies within the first quarter of the tail.
func cutTail(s *source, want int, headEnd int64) int64 {
	if want <= 0 {
		return s.size
	}
	b, off := s.tail, s.tailOff
	// t >= off+3 whenever off > 0, so Inside always sees the three bytes
	// before t.
	t := max(s.size-int64(want), off)
	if inside, _, end := utf8x.Inside(b, int(t-off)); inside {
		t = off + int64(end)
	}
	// Invalid bytes grow to three in the valid form: drop whole
	// characters from the front, decoding forward from a boundary, until
	// the rest fits.
	for v := utf8x.ValidLen(b[t-off:]); v > want; {
		r, size := utf8.DecodeRune(b[t-off:])
		if r == utf8.RuneError && size == 1 {
			v -= len(string(utf8.RuneError))
		} else {
			v -= size
		}
		t += int64(size)
	}
	if t < headEnd {
		t = headEnd // cannot happen for data that does not fit; kept safe
	}
	if t > 0 && t < s.size && b[t-off-1] != '\n' {
		q := (s.size - t) / 4
		if j := bytes.IndexByte(b[t-off:t-off+q], '\n'); j >= 0 && t+int64(j)+1 < s.size {
			t += int64(j) + 1
		}
	}
	return t
}
