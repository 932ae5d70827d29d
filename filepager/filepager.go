package filepager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
	"github.com/scrollback-dev/scrollback/present"
)

// Defaults from the product contract.
const (
	DefaultPageBytes = 24 << 10 // file page budget, 24 KiB
	DefaultMaxLines  = 2000     // default line limit
	// DefaultLineWindow is how much of a line longer than a whole page one
	// page shows: the size of a read_tool_output page. Such a line is
	// minified JSON or a log blob far more often than prose, and a model
	// reading one wants the part at an offset it searched for, not 24 KiB
	// of it; the 2 MB one-line file of scrollback eval's json-byte-offset
	// scenario cost 6,200 tokens a page at 24 KiB.
	DefaultLineWindow = 4 << 10
)

// sniffBytes is how much of a file's start is checked for NUL bytes and
// private key blocks.
const sniffBytes = 8 << 10

// Options configure a Pager. The zero value is usable.
type Options struct {
	PageBytes  int      // page budget, default 24 KiB (24576); at least 4
	LineWindow int      // most bytes a page shows of a line longer than the page, default 4 KiB; at least 4, at most PageBytes
	MaxLines   int      // default line limit, 2000
	Root       string   // when set, reads are confined to this directory tree (after resolving symlinks)
	Deny       []string // extra deny patterns (filepath.Match globs on the resolved absolute path or base name)
	Home       string   // home dir for the ~/ rules; default os.UserHomeDir()
	IndexDir   string   // where line-index checkpoints persist between processes; "" = in memory only
}

// Request asks for one page of a file.
type Request struct {
	Path       string
	Line       int64  // 1-based, 0 means 1
	Limit      int64  // most lines, 0 means MaxLines
	ByteOffset *int64 // when non-nil wins over Line
}

// Page is one page of a file. Its JSON form is read_file's result.
type Page struct {
	Text           string `json:"text"`           // the page: whole lines with their line endings, or part of a line longer than a page (MidLine)
	StartLine      int64  `json:"startLine"`      // 1-based line the page starts in
	EndLine        int64  `json:"endLine"`        // line the page ends in (StartLine for an empty page)
	NextLine       int64  `json:"nextLine"`       // line that NextByteOffset is in: where the next page starts
	NextByteOffset int64  `json:"nextByteOffset"` // byte offset the next page starts at: pass it as byte_offset to go on, also inside a long line
	TotalBytes     int64  `json:"totalBytes"`     // the file's size in bytes
	HasMore        bool   `json:"hasMore"`        // the file goes on after this page
}

// MidLine reports whether the page ends inside a line that goes on after
// it: a line longer than a page, cut at the budget and continued at
// NextByteOffset.
func (p Page) MidLine() bool {
	return p.HasMore && p.Text != "" && p.Text[len(p.Text)-1] != '\n'
}

// Pager reads pages of files. It is safe for concurrent use; its line
// indexes are shared by all its reads.
type Pager struct {
	opts    Options
	root    string // Options.Root resolved, or ""
	rootErr error
	deny    []string
	denyErr error
	cache   indexCache
	scanned atomic.Int64 // bytes read while locating lines, for tests
	step    int64        // line-index checkpoint spacing: defaultStep; tests shrink it

	// Test seams: called with the resolved path just before the file is
	// opened, and just after it was opened and its size taken.
	beforeOpen, opened func(resolved string)
}

// New returns a Pager with the given options, defaults filled in. Problems
// with the options (a root that does not exist, a malformed deny pattern) are
// reported by every Read, so that a misconfigured Pager refuses rather than
// reads too much.
func New(opts Options) *Pager {
	if opts.PageBytes <= 0 {
		opts.PageBytes = DefaultPageBytes
	}
	opts.PageBytes = max(opts.PageBytes, utf8.UTFMax)
	if opts.LineWindow <= 0 {
		opts.LineWindow = DefaultLineWindow
	}
	opts.LineWindow = min(max(opts.LineWindow, utf8.UTFMax), opts.PageBytes)
	if opts.MaxLines <= 0 {
		opts.MaxLines = DefaultMaxLines
	}
	if opts.Home == "" {
		opts.Home, _ = os.UserHomeDir()
	}
	p := &Pager{opts: opts, step: defaultStep}
	if opts.Root != "" {
		root, err := filepath.Abs(expandHome(opts.Root, opts.Home))
		if err == nil {
			root, err = filepath.EvalSymlinks(root)
		}
		if err != nil {
			p.rootErr = fmt.Errorf("%w: root %q is unusable: %v", ErrInvalid, opts.Root, err)
		}
		p.root = root
	}
	for _, pat := range opts.Deny {
		pat = expandHome(pat, opts.Home)
		if _, err := filepath.Match(pat, ""); err != nil && p.denyErr == nil {
			p.denyErr = fmt.Errorf("%w: deny pattern %q is malformed: %v", ErrInvalid, pat, err)
		}
		p.deny = append(p.deny, pat)
	}
	return p
}

func expandHome(p, home string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return filepath.Join(home, p[1:])
	}
	return p
}

// Read returns one page of req.Path: from req.ByteOffset when it is set,
// else from the start of line req.Line. Every error is an *Error.
func (p *Pager) Read(ctx context.Context, req Request) (Page, error) {
	if err := p.check(req); err != nil {
		return Page{}, err
	}
	f, fi, resolved, oerr := p.open(req.Path)
	if oerr != nil {
		return Page{}, fail(req, oerr.Op, oerr.Err, oerr.Hint)
	}
	defer f.Close()
	size := fi.Size()
	var r io.ReaderAt = f
	unsized := false
	if size == 0 || pseudoFile(resolved) {
		// A /proc file reports no size yet has content, and a /sys file
		// 4096 bytes whatever it holds: read it whole (it is small) and
		// cut the page from that.
		data, err := io.ReadAll(io.LimitReader(f, maxUnsized+1))
		if err != nil {
			return Page{}, fail(req, "read", err, "")
		}
		if len(data) > maxUnsized {
			return Page{}, fail(req, "read", fmt.Errorf("%w: it reports a size of %d bytes, which /proc and /sys files do not keep to, and holds more than %d", ErrSize, size, maxUnsized),
				"read it with a command (head, grep) instead")
		}
		if len(data) > 0 {
			r, size, unsized = bytes.NewReader(data), int64(len(data)), true
		}
	}
	if err := sniff(req, r, resolved, size); err != nil {
		return Page{}, err
	}
	sc := p.scanner(ctx, r, resolved, size, fileStamp(fi), unsized)
	defer p.keep(sc)
	start, line, err := locate(req, r, sc, size)
	if err != nil {
		return Page{}, err
	}
	limit := req.Limit
	if limit == 0 {
		limit = int64(p.opts.MaxLines)
	}
	page, perr := p.page(r, start, line, size, limit)
	if perr != nil {
		return Page{}, fail(req, "read", perr, "")
	}
	return page, nil
}

// fail is the error of a Read of req.
func fail(req Request, op string, err error, hint string) *Error {
	if hint == "" && errors.Is(err, ErrSize) {
		hint = "read it again; if that fails too, read it with a command (cat)"
	}
	return &Error{Op: op, Path: req.Path, Err: err, Hint: hint}
}

// pseudoFile reports whether the resolved path is in Linux's /proc or /sys,
// whose files report sizes they do not have.
func pseudoFile(resolved string) bool {
	return runtime.GOOS == "linux" && (strings.HasPrefix(resolved, "/proc/") || strings.HasPrefix(resolved, "/sys/"))
}

// maxUnsized is the most a file that reports a size of 0, or lives in /proc
// or /sys, may hold: such a file is read whole into memory.
const maxUnsized = 1 << 20

// readAt fills b from offset off of a file that had size bytes when it was
// opened: one that ends before is ErrSize, never a short page.
func readAt(f io.ReaderAt, b []byte, off, size int64) error {
	n, err := f.ReadAt(b, off)
	switch {
	case n == len(b):
		return nil
	case err == nil, err == io.EOF, errors.Is(err, io.ErrUnexpectedEOF):
		return changed(size)
	}
	return err
}

// changed is the error for a file that had size bytes when it was opened
// and ended before them when read.
func changed(size int64) error {
	return fmt.Errorf("%w: it had %d bytes when opened and fewer when read (it changed while being read, or reports a size it does not have)", ErrSize, size)
}

// check refuses a request that cannot be served whatever the file holds,
// and a Pager whose configuration is broken.
func (p *Pager) check(req Request) error {
	switch {
	case req.Path == "":
		return fail(req, "open", fmt.Errorf("%w: no path given", ErrInvalid), `pass the file's path, e.g. "go.mod"`)
	case req.Line < 0:
		return fail(req, "read", fmt.Errorf("%w: line %d is negative", ErrInvalid, req.Line), "lines count from 1")
	case req.Limit < 0:
		return fail(req, "read", fmt.Errorf("%w: limit %d is negative", ErrInvalid, req.Limit), fmt.Sprintf("give a positive number of lines, or 0 for %d", p.opts.MaxLines))
	case p.rootErr != nil:
		return fail(req, "open", p.rootErr, "fix the configured root directory")
	case p.denyErr != nil:
		return fail(req, "open", p.denyErr, "fix the configured deny patterns")
	}
	return nil
}

// sniff refuses a binary file and one that holds a private key, from the
// file's first sniffBytes.
func sniff(req Request, f io.ReaderAt, resolved string, size int64) error {
	head := make([]byte, min(size, sniffBytes))
	if err := readAt(f, head, 0, size); err != nil {
		return fail(req, "read", err, "")
	}
	if i := bytes.IndexByte(head, 0); i >= 0 {
		return fail(req, "open", fmt.Errorf("%w: %d bytes, NUL byte at offset %d", ErrBinary, size, i),
			"run a hex dump of it (xxd, od) or a tool made for that format instead")
	}
	if sniffPrivateKey(resolved, head) {
		return fail(req, "open", fmt.Errorf("%w: it holds a private key", ErrSensitive), "private keys are never shown; ask the user if you need facts about it")
	}
	return nil
}

// locate finds where the page starts: the byte offset and the line number
// there, from req's byte offset (checked to be a character boundary in the
// file) or its line (checked to exist).
func locate(req Request, f io.ReaderAt, sc *scanner, size int64) (start, line int64, _ error) {
	if req.ByteOffset != nil {
		start = *req.ByteOffset
		if start < 0 || start > size {
			return 0, 0, fail(req, "read", fmt.Errorf("%w: byte offset %d is outside the file, which has %d bytes", ErrOffset, start, size),
				fmt.Sprintf("use an offset from 0 to %d, or nextByteOffset from the previous page", size))
		}
		if err := checkBoundary(f, start, size); err != nil {
			return 0, 0, fail(req, "read", err, "continue from nextByteOffset of the previous page, or from a line")
		}
		line, err := sc.lineOf(start)
		if err != nil {
			return 0, 0, fail(req, "read", err, "")
		}
		return start, line, nil
	}
	line = max(req.Line, 1)
	if line == 1 {
		return 0, 1, nil
	}
	start, err := sc.lineStart(line)
	if err != nil {
		return 0, 0, fail(req, "read", err, "")
	}
	if start < 0 || start == size {
		n, err := lineCount(f, sc.ix)
		if err != nil {
			return 0, 0, fail(req, "read", err, "")
		}
		return 0, 0, fail(req, "read", fmt.Errorf("%w: asked for line %d, the file has %s", ErrLine, line, present.Plural(n, "line")),
			fmt.Sprintf("ask for a line from 1 to %d", max(n, 1)))
	}
	return start, line, nil
}

// open resolves and checks path and opens it. Its errors lack the path,
// which Read fills in.
func (p *Pager) open(path string) (*os.File, fs.FileInfo, string, *Error) {
	fail := func(err error, hint string) (*os.File, fs.FileInfo, string, *Error) {
		return nil, nil, "", &Error{Op: "open", Err: err, Hint: hint}
	}
	given := expandHome(path, p.opts.Home)
	if !filepath.IsAbs(given) && p.root != "" {
		given = filepath.Join(p.root, given)
	}
	given, err := filepath.Abs(given)
	if err != nil {
		return fail(err, "")
	}
	if err := p.refuse(given); err != nil {
		return fail(err.Err, err.Hint)
	}
	resolved, err := filepath.EvalSymlinks(given)
	if err != nil {
		return nil, nil, "", p.unresolved(given, err)
	}
	if err := p.refuse(resolved); err != nil {
		return fail(err.Err, err.Hint)
	}
	if p.root != "" && !p.within(resolved) {
		return nil, nil, "", p.outside(resolved)
	}
	// Stat before opening: a device is not even opened (opening some has
	// effects), and the type is checked again on what was opened.
	fi, err := os.Stat(resolved)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fail(fmt.Errorf("%w: it resolves to %s", ErrNotFound, shortPath(resolved)), "check the path")
		}
		return fail(err, "")
	}
	if err := regular(fi); err != nil {
		return nil, nil, "", err
	}
	if p.beforeOpen != nil {
		p.beforeOpen(resolved)
	}
	f, err := openFile(resolved)
	if err != nil {
		return fail(err, "")
	}
	fi, err = f.Stat()
	if err == nil {
		if e := regular(fi); e != nil {
			f.Close()
			return nil, nil, "", e
		}
		err = blocking(f)
	}
	if err != nil {
		f.Close()
		return fail(err, "")
	}
	if p.opened != nil {
		p.opened(resolved)
	}
	return f, fi, resolved, nil
}

// regular refuses what fi describes unless it is a regular file, naming
// the kind of file it is.
func regular(fi fs.FileInfo) *Error {
	m := fi.Mode()
	var kind string
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return &Error{Op: "open", Err: ErrIsDir, Hint: "list it (ls), then read a file in it"}
	case m&fs.ModeNamedPipe != 0:
		kind = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeCharDevice != 0:
		kind = "a character device"
	case m&fs.ModeDevice != 0:
		kind = "a block device"
	default:
		kind = "of type " + m.Type().String()
	}
	return &Error{Op: "open", Err: fmt.Errorf("%w: it is %s", ErrNotRegular, kind), Hint: "read devices, pipes and sockets with a command (cat, dd) instead"}
}

// refuse applies the sensitive-file rules and deny patterns to the absolute
// path abs.
func (p *Pager) refuse(abs string) *Error {
	if why := sensitiveReason(abs); why != "" {
		return &Error{Err: fmt.Errorf("%w: %s", ErrSensitive, why), Hint: "secrets are never shown; ask the user if you need facts about this file"}
	}
	if pat := denyMatch(p.deny, abs); pat != "" {
		return &Error{Err: fmt.Errorf("%w: it matches the deny pattern %q", ErrSensitive, pat), Hint: "this path is denied by configuration"}
	}
	return nil
}

// checkBoundary returns an error when off falls inside a multi-byte
// character, naming the nearest valid offsets on either side.
func checkBoundary(f io.ReaderAt, off, size int64) error {
	lo := max(off-(utf8.UTFMax-1), 0)
	hi := min(off+utf8.UTFMax-1, size)
	w := make([]byte, hi-lo)
	if err := readAt(f, w, lo, size); err != nil {
		return err
	}
	if inside, s, e := utf8x.Inside(w, int(off-lo)); inside {
		return fmt.Errorf("%w: byte offset %d is inside a character; the nearest valid offsets are %d and %d",
			ErrSplit, off, lo+int64(s), lo+int64(e))
	}
	return nil
}

// lineCount returns the number of lines in the file: its newlines, plus one
// for a last line without one. ix must know the total.
func lineCount(f io.ReaderAt, ix *lineIndex) (int64, error) {
	n := ix.total
	if ix.size > 0 {
		var last [1]byte
		if err := readAt(f, last[:], ix.size-1, ix.size); err != nil {
			return 0, err
		}
		if last[0] != '\n' {
			n++
		}
	}
	return n, nil
}

// page cuts the page starting at byte start, which is on line line.
func (p *Pager) page(f io.ReaderAt, start, line, size, limit int64) (Page, error) {
	budget := p.opts.PageBytes
	// A valid character is at most as long in Text as in the file, so the
	// page never covers more than budget raw bytes; UTFMax more tell
	// whether the last character is whole.
	buf := make([]byte, min(int64(budget+utf8.UTFMax), size-start))
	if err := readAt(f, buf, start, size); err != nil {
		return Page{}, err
	}
	atEOF := start+int64(len(buf)) == size
	end := fit(buf, budget, atEOF)
	byBudget := end < len(buf)
	// The line limit.
	if i := nthNewline(buf[:end], limit); i >= 0 {
		end, byBudget = i+1, false
	}
	// Prefer whole lines: end after the last newline that fits. A page
	// that is all one line going on past the budget shows a window of it.
	if byBudget {
		if i := bytes.LastIndexByte(buf[:end], '\n'); i >= 0 {
			end = i + 1
		} else {
			end = fit(buf, p.opts.LineWindow, atEOF)
		}
	}
	raw := buf[:end]
	pg := Page{
		Text:           utf8x.ValidString(raw),
		StartLine:      line,
		EndLine:        line,
		NextLine:       line + int64(bytes.Count(raw, nl)),
		NextByteOffset: start + int64(end),
		TotalBytes:     size,
	}
	if end > 0 {
		pg.EndLine = line + int64(bytes.Count(raw[:end-1], nl))
	}
	pg.HasMore = pg.NextByteOffset < size
	return pg, nil
}

// fit returns the largest n such that b[:n] ends on a character boundary and
// shows as at most budget bytes of valid UTF-8 (each invalid byte as the
// three bytes of U+FFFD). b starts on a boundary; atEOF says whether the
// file ends with b. When budget >= 4 and b is not empty, n > 0.
func fit(b []byte, budget int, atEOF bool) int {
	n, w := 0, 0
	for n < len(b) {
		c := b[n]
		if c < utf8.RuneSelf {
			if w+1 > budget {
				break
			}
			n, w = n+1, w+1
			continue
		}
		if !atEOF && !utf8.FullRune(b[n:]) {
			break // cannot tell yet whether this sequence is valid
		}
		r, size := utf8.DecodeRune(b[n:])
		width := size
		if r == utf8.RuneError && size == 1 {
			width = len(string(utf8.RuneError))
		}
		if w+width > budget {
			break
		}
		n, w = n+size, w+width
	}
	return n
}

// nthNewline returns the index of the nth newline in b, or -1.
func nthNewline(b []byte, n int64) int {
	i := -1
	for ; n > 0; n-- {
		j := bytes.IndexByte(b[i+1:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
	}
	return i
}

// scanner returns a scanner over f that extends a private copy of the best
// index known for this file version; with fresh, a new index that is not
// kept (for a file whose size and time do not tell its versions apart).
func (p *Pager) scanner(ctx context.Context, f io.ReaderAt, path string, size, stamp int64, fresh bool) *scanner {
	if fresh {
		return &scanner{ctx: ctx, f: f, ix: newIndex(path, size, stamp, p.step), scanned: new(int64), fresh: true}
	}
	ix := p.cache.get(path)
	if ix == nil || !ix.matches(size, stamp) || ix.step != p.step {
		ix = nil
		if p.opts.IndexDir != "" {
			ix = loadIndex(p.opts.IndexDir, path, size, stamp, p.step)
			if ix != nil {
				p.cache.put(ix)
			}
		}
		if ix == nil {
			ix = newIndex(path, size, stamp, p.step)
		}
	}
	return &scanner{ctx: ctx, f: f, ix: ix.clone(), scanned: new(int64)}
}

// keep publishes what a scan learned: to the cache, and to the index file.
func (p *Pager) keep(sc *scanner) {
	sc.release()
	p.scanned.Add(*sc.scanned)
	if !sc.grew || sc.fresh {
		return
	}
	p.cache.put(sc.ix)
	if p.opts.IndexDir != "" {
		saveIndex(p.opts.IndexDir, sc.ix)
	}
}
