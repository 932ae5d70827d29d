package scrollback

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/internal/utf8x"
	"github.com/scrollback-dev/scrollback/jsonq"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/store"
)

// query_tool_output's bounds and defaults.
const (
	QueryTimeout   = jsonq.DefaultTimeout   // 5 s: a filter running longer is stopped
	QueryMaxOutput = jsonq.DefaultMaxOutput // 8 MiB: results larger than this stop the filter
	// QueryCacheBytes bounds the results an Engine keeps so that paging
	// through them does not run the filter again for every page.
	QueryCacheBytes = 32 << 20
	// queryCacheEntries bounds how many results the cache keeps.
	queryCacheEntries = 64
)

// QueryInput is the input of query_tool_output.
type QueryInput struct {
	// ID is an output_id from a result in the same session.
	ID string `json:"id"`
	// Filter is a jq filter run on each document of the copy.
	Filter string `json:"filter"`
	// Offset is the UTF-8 byte offset into the results to start at.
	Offset int64 `json:"offset,omitempty"`
	// Limit is the most bytes to return, 1 to 4096; nil means 4096.
	Limit *int `json:"limit,omitempty"`
}

// QueryResult is one page of a filter's results: the result of
// query_tool_output.
type QueryResult struct {
	Text       string `json:"text"`       // results as compact JSON, one a line
	NextOffset int64  `json:"nextOffset"` // where the next page of results starts
	TotalBytes int64  `json:"totalBytes"` // length of all the results
	HasMore    bool   `json:"hasMore"`    // more results follow nextOffset
	Complete   bool   `json:"complete"`   // the copy holds everything the tool produced
	// Note says, when the copy is incomplete, where its parsing stopped:
	// the results cover only the whole documents before that offset.
	Note string `json:"note,omitempty"`
}

// QueryToolOutput runs a jq filter over a retained copy of this session and
// returns one page of its results. The copy is read as one JSON document or
// as a stream of documents (JSON Lines); see package jsonq for the rules.
// The results are compact JSON, one a line, paged as ReadToolOutput pages a
// copy: following NextOffset from 0 yields them all, and a page never ends
// inside a character. The results of a recent (id, filter) are kept by the
// engine (up to QueryCacheBytes in all), so paging runs the filter once.
//
// With Options.CodeWorkers the filter runs in a worker process
// (codemode.Pool.Query), under the operating system's memory and time
// limits: a filter that blows up memory in one step (which the heap
// watch cannot stop) ends its worker, not this process.
//
// An invalid filter, a copy that is not JSON, a filter that fails, and a
// filter stopped by the time, output or memory limit are *Error values
// wrapping ErrArgument, whose message says which. With CodeWorkers, a
// worker process that could not be started is an *Error wrapping
// ErrUnavailable.
func (s *Session) QueryToolOutput(ctx context.Context, in QueryInput) (QueryResult, error) {
	const op = "query_tool_output"
	if err := s.usable(op); err != nil {
		return QueryResult{}, err
	}
	limit := PageLimit
	if in.Limit != nil {
		limit = *in.Limit
		if limit < 1 || limit > PageLimit {
			return QueryResult{}, errorf(op, ErrLimit, fmt.Sprintf("give a limit from 1 to %d, or none for %d", PageLimit, PageLimit),
				"limit %d is out of range", limit)
		}
	}
	f, err := jsonq.Compile(in.Filter)
	if err != nil {
		return QueryResult{}, s.queryError(op, in, err)
	}
	info, err := s.stat(ctx, op, in.ID)
	if err != nil {
		return QueryResult{}, err
	}
	key := queryKey{session: s.ID(), id: in.ID, filter: in.Filter}
	res, ok := s.e.queries.get(key)
	if !ok {
		r, err := s.e.opts.CodeWorkers.Query(ctx, f, store.ReaderAt(ctx, s.e.store, s.ID(), in.ID), info.TotalBytes, jsonq.Options{
			Timeout:   s.e.opts.QueryTimeout,
			MaxOutput: s.e.opts.QueryMaxOutput,
			MaxMemory: s.e.opts.QueryMaxMemory,
			Complete:  info.Complete,
		})
		if err != nil {
			var je *jsonq.Error
			if errors.As(err, &je) {
				return QueryResult{}, s.queryError(op, in, err)
			}
			if ctx.Err() != nil {
				return QueryResult{}, &Error{Op: op, Err: ctx.Err(), Msg: "the query was cancelled: " + ctx.Err().Error()}
			}
			if errors.Is(err, codemode.ErrWorker) {
				return QueryResult{}, &Error{Op: op, Err: fmt.Errorf("%w: %w", ErrUnavailable, err), Msg: err.Error(),
					Hint: "the server runs filters in worker processes (Options.CodeWorkers); see its log for why they do not start"}
			}
			return QueryResult{}, s.readError(op, in.ID, errors.Unwrap(err))
		}
		res = queryResults{text: r.Text, note: queryNote(r)}
		s.e.queries.put(key, res)
	}
	return pageResults(op, res, in.Offset, limit, info.Complete)
}

// queryNote says what the results of a run over an incomplete copy
// cover: the documents around each gap a cap left, and where parsing
// stopped, if it did; "" when the run read the whole copy.
func queryNote(r *jsonq.Result) string {
	var notes []string
	for i, g := range r.Gaps {
		next := r.Documents
		if i+1 < len(r.Gaps) {
			next = r.Gaps[i+1].Before
		}
		notes = append(notes, present.QueryGap(g.Offset, g.Marker, int64(g.Before), int64(next-g.Before), g.Resumed, g.Skipped))
	}
	if r.Stopped >= 0 {
		notes = append(notes, present.QueryStopped(r.Stopped, r.StopReason, int64(r.Documents)))
	}
	return strings.Join(notes, "; ")
}

// pageResults cuts one page out of the results, by the reader's rules.
func pageResults(op string, res queryResults, off int64, limit int, complete bool) (QueryResult, error) {
	text := res.text
	total := int64(len(text))
	out := QueryResult{NextOffset: off, TotalBytes: total, Complete: complete, Note: res.note}
	if off < 0 {
		return QueryResult{}, errorf(op, ErrOffset, fmt.Sprintf("offsets count UTF-8 bytes of the results from 0 to totalBytes (%d)", total),
			"offset %d is negative", off)
	}
	if off > total {
		return QueryResult{}, errorf(op, ErrOffset, fmt.Sprintf("the results hold %d bytes, so offsets run from 0 to %d", total, total),
			"offset %d is past the end of the results", off)
	}
	start := max(off-3, 0)
	if inside, before, after := utf8x.Inside(text[start:min(off+3, total)], int(off-start)); inside {
		return QueryResult{}, errorf(op, ErrOffset,
			fmt.Sprintf("the nearest valid offsets are %d (before) and %d (after)", start+int64(before), start+int64(after)),
			"offset %d is inside a multi-byte UTF-8 character", off)
	}
	body := text[off:min(off+int64(limit)+3, total)]
	n := utf8x.CutEnd(body, limit, off+int64(len(body)) == total)
	if n == 0 && len(body) > 0 {
		_, size := utf8.DecodeRune(body)
		return QueryResult{}, errorf(op, ErrLimit, fmt.Sprintf("use a limit of at least %d", size),
			"limit %d is smaller than the %d-byte character at offset %d", limit, size, off)
	}
	out.Text = string(body[:n])
	out.NextOffset = off + int64(n)
	out.HasMore = out.NextOffset < total
	return out, nil
}

// queryError makes a jsonq error of in a tool error of kind argument.
// When the copy is not whole JSON, what to do instead names this copy's
// read and grep calls, as this session's surface makes them.
func (s *Session) queryError(op string, in QueryInput, err error) error {
	var je *jsonq.Error
	if !errors.As(err, &je) {
		return &Error{Op: op, Err: err, Msg: err.Error()}
	}
	msg, hint := je.Msg, je.Hint
	switch {
	case errors.Is(err, jsonq.ErrFilter):
		msg = "filter " + quoteArg(in.Filter) + ": " + msg
	case errors.Is(err, jsonq.ErrCut), errors.Is(err, jsonq.ErrSyntax):
		hint += " (" + s.e.opts.Surface.ReadOrGrep(in.ID) + ")"
	}
	return &Error{Op: op, Err: fmt.Errorf("%w: %w", ErrArgument, je.Err), Msg: msg, Hint: hint}
}

// queryKey names one filter's results over one copy. The session is part
// of it, so no session ever sees another's results, whatever the ids.
type queryKey struct{ session, id, filter string }

type queryResults struct {
	text []byte
	note string
}

// queryCache keeps recent results, least recently used dropped first, up
// to a total size. Copies never change once saved, so results stay right
// for as long as the copy exists; a lookup is made only after the copy has
// been found in the caller's session.
type queryCache struct {
	mu    sync.Mutex
	max   int
	size  int
	order []queryKey // least recently used first
	m     map[queryKey]queryResults
}

func (c *queryCache) get(k queryKey) (queryResults, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[k]
	if ok {
		c.touch(k)
	}
	return r, ok
}

func (c *queryCache) put(k queryKey, r queryResults) {
	cost := len(r.text) + len(k.filter) + 128
	c.mu.Lock()
	defer c.mu.Unlock()
	if cost > c.max {
		return
	}
	if c.m == nil {
		c.m = map[queryKey]queryResults{}
	}
	if old, ok := c.m[k]; ok {
		c.size -= len(old.text) + len(k.filter) + 128
	}
	c.m[k] = r
	c.size += cost
	c.touch(k)
	for (c.size > c.max || len(c.order) > queryCacheEntries) && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.size -= len(c.m[old].text) + len(old.filter) + 128
		delete(c.m, old)
	}
}

// touch moves k to the most recently used end.
func (c *queryCache) touch(k queryKey) {
	for i, o := range c.order {
		if o == k {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	c.order = append(c.order, k)
}
