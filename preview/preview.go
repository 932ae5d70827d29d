package preview

import (
	"bytes"
	"errors"
	"io"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// The contract's budgets.
const (
	// Budget is the preview budget of run_command and run_code: 24 KiB.
	Budget = 24576
	// HistoryBudget is the head-and-tail budget of results entering a
	// conversation history (proxied tools, the Go history helper): 32 KiB.
	HistoryBudget = 32768
	// ReadTool is the name of the reader tool the footer tells the model
	// to call.
	ReadTool = "read_tool_output"
)

// Options sets the budget of a preview and how it is split. The zero value
// gives Budget, split about two thirds head and one third tail.
//
// Values are clamped, never rejected: a Budget of 0 or less means Budget;
// HeadBytes and TailBytes are cut down so that head, footer and tail fit the
// budget together. A negative HeadBytes shows no head, a negative TailBytes no
// tail (the footer then comes first or last).
type Options struct {
	Budget    int // most bytes of Text, footer included; <= 0 means Budget
	HeadBytes int // bytes of head wanted; 0 = about two thirds of what the footer leaves
	TailBytes int // bytes of tail wanted; 0 = the rest (about one third)
}

// Footer is what the footer says besides what Render counts in the data.
type Footer struct {
	// ID is the output_id of the retained copy; "" when none was saved.
	ID string
	// Unavailable says why the copy could not be saved; used when ID is "".
	Unavailable string
	// Complete reports whether the retained copy holds everything the tool
	// produced. Ignored when ID is "".
	Complete bool
	// Status is optional, e.g. "exit status 2", "killed by signal SIGKILL",
	// "timed out after 30s". It is shown as one sentence.
	Status string
	// Gap, when not nil, says the copy itself lacks a run of the bytes the
	// tool produced (head and tail kept past the copy cap).
	Gap *Gap
	// ReadTool is the name of the reader tool; "" means ReadTool.
	ReadTool string
	// Outline, when not empty, is the shape of a copy that holds JSON
	// (jsonq.Outline.Text): lines of at most about OutlineBytes in all. The
	// full footer shows it under a line naming QueryTool; other levels
	// leave it out. Control characters other than newlines are shown as
	// spaces, and it is cut at OutlineBytes.
	Outline string
}

// OutlineBytes bounds Footer.Outline.
const OutlineBytes = 1 << 10

// Gap describes bytes the tool produced that the copy does not hold: at
// offset Offset in the copy, Bytes bytes in Lines lines were dropped. It is
// the one gap type: package capture reports it and results carry it, in the
// contract's JSON shape.
type Gap struct {
	Offset int64 `json:"offset"` // where the marker line starts in the copy
	Bytes  int64 `json:"bytes"`  // bytes dropped at the marker
	Lines  int64 `json:"lines"`  // newlines among the dropped bytes
}

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
	}
	return cut(src, budget, opts, f)
}

// History cuts data for a conversation history: Render with HistoryBudget,
// head and tail, and the same footer.
func History(data []byte, f Footer) Preview {
	return Render(data, Options{Budget: HistoryBudget}, f)
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
	return cut(source{size: size, head: head, tail: tail, tailOff: tailOff, lines: lines}, budget, opts, f), nil
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
	lines   int64 // lines in the whole data
}

// at returns the data's byte at offset off, which must lie in one of the
// windows.
func (s *source) at(off int64) byte {
	if off < int64(len(s.head)) {
		return s.head[off]
	}
	return s.tail[off-s.tailOff]
}

// cut renders the preview of data that does not fit budget.
func cut(s source, budget int, opts Options, f Footer) Preview {
	f = f.clean()
	lv := chooseLevel(&s, budget, f)
	flen := len(renderFooter(lv, f, worstNumbers(&s)))
	for range 3 {
		p, foot := layout(&s, budget, flen, lv, opts, f)
		if len(foot) <= flen {
			// The bound is loose by a few digits and words: give the
			// slack back to the head and tail when the footer allows.
			if len(foot) < flen {
				if p2, foot2 := layout(&s, budget, len(foot), lv, opts, f); len(foot2) <= len(foot) {
					return assemble(&s, p2, foot2)
				}
			}
			return assemble(&s, p, foot)
		}
		// The bound did not hold (it should): leave room for this
		// footer and lay out again.
		flen = len(foot)
	}
	p, _ := layout(&s, budget, 0, levelNone, opts, f)
	return assemble(&s, p, "")
}

// layout cuts the head and the tail around a footer of at most flen bytes
// and renders the footer with the real numbers.
func layout(s *source, budget, flen int, lv level, opts Options, f Footer) (Preview, string) {
	avail := budget
	if lv != levelNone {
		avail -= flen + 1 // the newline that may end a head cut mid-line
	}
	avail = max(avail, 0)
	head, tail := opts.HeadBytes, opts.TailBytes
	switch {
	case head < 0:
		head = 0
	case head == 0 && lv == levelNone:
		head = avail // head only: all of it
	case head == 0:
		head = avail * 2 / 3
	}
	head = min(head, avail)
	switch {
	case tail < 0 || lv == levelNone:
		tail = 0 // no tail without a footer to mark the gap
	case tail == 0:
		tail = avail - head
	}
	tail = min(tail, avail-head)

	h := cutHead(s, head)
	t := cutTail(s, tail, h)
	p := Preview{Truncated: true, HeadEnd: h, TailStart: t, TotalLines: s.lines, OmittedBytes: t - h}
	nlHead := int64(bytes.Count(s.head[:h], nl))
	p.HeadLines = nlHead
	if h > 0 && s.at(h-1) != '\n' {
		p.HeadLines++
	}
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
	nums := numbers{
		size: s.size, lines: s.lines,
		headEnd: h, headLines: p.HeadLines,
		headMid:   h > 0 && s.at(h-1) != '\n',
		tailFirst: tailFirst, tailLines: p.TailLines,
		tailMid:      t < s.size && t > 0 && s.at(t-1) != '\n',
		omittedBytes: p.OmittedBytes, omittedLines: p.OmittedLines,
	}
	return p, renderFooter(lv, f, nums)
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
