package scrollback

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/store"
)

// ReadInput is the input of read_tool_output.
type ReadInput struct {
	// ID is an output_id from a result in the same session.
	ID string `json:"id"`
	// Offset is the UTF-8 byte offset to start at: 0, a nextOffset, or any
	// offset that is not inside a character.
	Offset int64 `json:"offset,omitempty"`
	// Limit is the most bytes to return, 1 to 4096; nil means 4096.
	Limit *int `json:"limit,omitempty"`
}

// Page is one page of a retained copy: the result of read_tool_output.
type Page struct {
	Text       string `json:"text"`       // the page; bytes that are not valid UTF-8 show as U+FFFD each
	NextOffset int64  `json:"nextOffset"` // where the next page starts
	TotalBytes int64  `json:"totalBytes"` // length of the retained copy
	HasMore    bool   `json:"hasMore"`    // more retained text follows nextOffset
	Complete   bool   `json:"complete"`   // the copy holds everything the tool produced
}

// ReadToolOutput returns one page of a retained copy of this session. It
// never re-runs anything and looks the id up in this session only. A page
// ends at the last whole character within the limit, so concatenating the
// pages got by following NextOffset from 0 yields the copy byte for byte.
func (s *Session) ReadToolOutput(ctx context.Context, in ReadInput) (Page, error) {
	const op = "read_tool_output"
	if err := s.usable(op); err != nil {
		return Page{}, err
	}
	limit := PageLimit
	if in.Limit != nil {
		limit = *in.Limit
		if limit < 1 || limit > PageLimit {
			return Page{}, errorf(op, ErrLimit, fmt.Sprintf("give a limit from 1 to %d, or none for %d", PageLimit, PageLimit),
				"limit %d is out of range", limit)
		}
	}
	if err := requireID(op, in.ID); err != nil {
		return Page{}, err
	}
	// One store query gives the copy's info and the page, with three bytes
	// either side of it, to tell whether the offset and the page's end fall
	// inside a character. The copy's size is not known before: read as
	// much as a page can need and let the store say where the copy ends.
	off := in.Offset
	start := max(off-3, 0)
	arr := pageBufs.Get().(*[PageLimit + 6]byte)
	defer pageBufs.Put(arr)
	buf := arr[:max(off-start, 0)+int64(limit)+3]
	info, n, err := s.e.store.StatReadCopyAt(ctx, s.ID(), in.ID, buf, start)
	if info.ID == "" { // the copy was not found, or the store failed
		if err == nil {
			err = store.ErrCopyNotFound // a store that broke its contract
		}
		return Page{}, s.readError(op, in.ID, err)
	}
	total := info.TotalBytes
	if off < 0 {
		return Page{}, errorf(op, ErrOffset, fmt.Sprintf("offsets count UTF-8 bytes from 0 to totalBytes (%d)", total),
			"offset %d is negative", off)
	}
	if off > total {
		return Page{}, errorf(op, ErrOffset, fmt.Sprintf("the copy holds %d bytes, so offsets run from 0 to %d", total, total),
			"offset %d is past the end of the copy", off)
	}
	page := Page{NextOffset: off, TotalBytes: total, Complete: info.Complete}
	if off == total {
		return page, nil
	}
	end := min(off+int64(limit)+3, total)
	if int64(n) != end-start || err != nil && !errors.Is(err, io.EOF) {
		if err == nil || errors.Is(err, io.EOF) {
			err = fmt.Errorf("the store returned %d bytes at offset %d of %d, want %d", n, start, total, end-start)
		}
		return Page{}, s.readError(op, in.ID, err)
	}
	buf = buf[:n]
	base := int(off - start)
	if inside, before, after := utf8x.Inside(buf, base); inside {
		return Page{}, errorf(op, ErrOffset,
			fmt.Sprintf("the nearest valid offsets are %d (before) and %d (after)", start+int64(before), start+int64(after)),
			"offset %d is inside a multi-byte UTF-8 character", off)
	}
	body := buf[base:]
	cut := utf8x.CutEnd(body, limit, end == total)
	if cut == 0 {
		_, size := utf8.DecodeRune(body)
		return Page{}, errorf(op, ErrLimit, fmt.Sprintf("use a limit of at least %d", size),
			"limit %d is smaller than the %d-byte character at offset %d", limit, size, off)
	}
	page.Text = utf8x.ValidString(body[:cut])
	page.NextOffset = off + int64(cut)
	page.HasMore = page.NextOffset < total
	return page, nil
}

// pageBufs holds the buffers pages are read into: a store is an interface,
// so a buffer handed to it lives on the heap, and a page is read on every
// call. Nothing of one outlives the call (the page's text is a copy).
var pageBufs = sync.Pool{New: func() any { return new([PageLimit + 6]byte) }}

// stat looks a copy up in this session, mapping every kind of absence to
// the one ErrNoOutput error.
func (s *Session) stat(ctx context.Context, op, id string) (store.CopyInfo, error) {
	if err := requireID(op, id); err != nil {
		return store.CopyInfo{}, err
	}
	info, err := s.e.store.StatCopy(ctx, s.ID(), id)
	if err != nil {
		return store.CopyInfo{}, s.readError(op, id, err)
	}
	return info, nil
}

// requireID says that a call reading a copy was given no id, or a copy's
// resource URI (scrollback://output/ID, as a resource_link names it)
// instead of its id. The URI gets the error of any id not in the session,
// as the contract wants for every id that cannot be read, with a hint that
// names the bare id; it is not looked up, so the hint reveals nothing of
// other sessions.
func requireID(op, id string) error {
	if id == "" {
		return errorf(op, ErrArgument, "pass the output_id from a truncated result", "id is required")
	}
	if rest, ok := strings.CutPrefix(id, present.OutputURIPrefix); ok {
		bare, _, _ := strings.Cut(rest, "#")
		return &Error{Op: op, Err: ErrNoOutput, Msg: ErrNoOutput.Error() + ": " + quoteArg(id), Hint: present.BareIDHint(present.Clip(bare, 80))}
	}
	return nil
}

func (s *Session) readError(op, id string, err error) error {
	if errors.Is(err, store.ErrCopyNotFound) {
		return &Error{Op: op, Err: ErrNoOutput, Msg: ErrNoOutput.Error() + ": " + quoteArg(id), Hint: present.NoCopyHint}
	}
	if errors.Is(err, store.ErrEvicted) {
		// The store's message says which copy, when, and, from
		// present.Evicted, what to do.
		e := &Error{Op: op, Err: err, Msg: strings.TrimPrefix(err.Error(), "store: ")}
		if !strings.Contains(e.Msg, present.EvictedHint) {
			e.Hint = present.EvictedHint
		}
		return e
	}
	return &Error{Op: op, Err: err, Msg: "reading the retained copy failed: " + err.Error()}
}

// Cat writes a whole retained copy of this session to w, raw bytes as saved.
func (s *Session) Cat(ctx context.Context, id string, w io.Writer) (store.CopyInfo, error) {
	return s.CatRange(ctx, "cat", id, 0, -1, w)
}

// CatRange writes the bytes of a retained copy of this session from
// offset from up to offset to (excluded) to w, raw as saved; a negative to
// means the end of the copy. Both are offsets as read_tool_output takes
// them: from 0 to totalBytes and never inside a multi-byte UTF-8
// character (one inside is refused with the nearest valid offsets before
// and after it), so the bytes written are whole characters. op names the
// caller in its errors. It returns the copy's info, also with an offset
// error, so that a caller can say what the valid range is.
func (s *Session) CatRange(ctx context.Context, op, id string, from, to int64, w io.Writer) (store.CopyInfo, error) {
	if err := s.usable(op); err != nil {
		return store.CopyInfo{}, err
	}
	info, err := s.stat(ctx, op, id)
	if err != nil {
		return info, err
	}
	if to < 0 {
		to = info.TotalBytes
	}
	for _, off := range []int64{from, to} {
		if err := s.checkOffset(ctx, op, id, info.TotalBytes, off); err != nil {
			return info, err
		}
	}
	if from > to {
		return info, errorf(op, ErrOffset, "give the start first, as in bytes=0-4096",
			"the range %d-%d ends before it starts", from, to)
	}
	buf := make([]byte, min(store.ChunkSize, max(to-from, 1)))
	for off := from; off < to; {
		p := buf[:min(int64(len(buf)), to-off)]
		n, err := s.e.store.ReadCopyAt(ctx, s.ID(), id, p, off)
		if n > 0 {
			if _, werr := w.Write(p[:n]); werr != nil {
				return info, &Error{Op: op, Err: werr, Msg: "writing the copy: " + werr.Error()}
			}
			off += int64(n)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return info, s.readError(op, id, err)
		}
		if n == 0 {
			break
		}
	}
	return info, nil
}
