package scrollback

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/scrollback-dev/scrollback/grep"
	"github.com/scrollback-dev/scrollback/internal/utf8x"
	"github.com/scrollback-dev/scrollback/store"
)

// grep_tool_output's bounds and defaults.
const (
	GrepDefaultMax = 50       // matches per call when max is not given
	GrepMaxMax     = 1000     // the most matches one call may ask for
	GrepMaxContext = 20       // the most context lines before and after a match
	GrepLineBytes  = 1 << 10  // the most bytes of one line a result shows: a longer line shows a window around its match
	GrepBudget     = 32 << 10 // the most bytes of text one result holds (the first match is always whole)
)

// GrepInput is the input of grep_tool_output.
type GrepInput struct {
	// ID is an output_id from a result in the same session.
	ID string `json:"id"`
	// Pattern is an RE2 regular expression matched against each line.
	Pattern string `json:"pattern"`
	// IgnoreCase matches letters in either case.
	IgnoreCase bool `json:"ignore_case,omitempty"`
	// Context is how many lines before and after each match to return.
	Context int `json:"context,omitempty" jsonschema:"lines around each match"`
	// Max is the most matches to return, 1 to 1000; 0 means 50.
	Max int `json:"max,omitempty"`
	// Offset is the byte offset to search from: 0, or a nextOffset.
	Offset int64 `json:"offset,omitempty"`
	// Count asks only for the number of matching lines from Offset on.
	Count bool `json:"count,omitempty"`
}

// GrepMatch is one matching line of a retained copy.
type GrepMatch struct {
	Line      int64         `json:"line"`             // 1-based line number in the copy
	Offset    int64         `json:"offset"`           // where Text starts (the line's start, or its window's in a long line): a read_tool_output offset
	Text      string        `json:"text"`             // the line without its line ending, or a window of at most 1 KiB around the match; invalid bytes as U+FFFD
	Truncated bool          `json:"truncated"`        // Text is not the whole line: read around it from Offset
	Before    []ContextLine `json:"before,omitempty"` // up to context lines before it, oldest first
	After     []ContextLine `json:"after,omitempty"`  // up to context lines after it
}

// ContextLine is a line shown around a match. Context lines are the
// neighbours of a match whether or not they match too, so a line can be
// both a match and another match's context.
type ContextLine struct {
	Line      int64  `json:"line"`                // 1-based line number in the copy
	Offset    int64  `json:"offset"`              // byte offset of the line's start: a read_tool_output offset
	Text      string `json:"text"`                // the line without its line ending, its first GrepLineBytes when longer; invalid bytes as U+FFFD
	Truncated bool   `json:"truncated,omitempty"` // Text is not the whole line
}

// GrepResult is the result of grep_tool_output: the matches or, when the
// input asked for count, only how many lines match.
type GrepResult struct {
	// Matches are in copy order. They are nil exactly when the input asked
	// for count: then Matches, NextOffset and HasMore are not set and not
	// in the JSON, and Count is.
	Matches    []GrepMatch `json:"matches,omitzero"`
	NextOffset int64       `json:"nextOffset,omitzero"` // where to continue: the next match's line when hasMore, else totalBytes
	HasMore    bool        `json:"hasMore,omitzero"`    // another match starts at nextOffset
	Count      int64       `json:"count,omitzero"`      // with count: the number of matching lines from the input's offset on
	TotalBytes int64       `json:"totalBytes"`          // length of the retained copy
	Complete   bool        `json:"complete"`            // the copy holds everything the tool produced
}

// MarshalJSON writes the contract's object: matches, nextOffset and
// hasMore (each always present) or, for count (Matches nil), count in their
// place.
func (r GrepResult) MarshalJSON() ([]byte, error) {
	if r.Matches == nil {
		return json.Marshal(struct {
			Count      int64 `json:"count"`
			TotalBytes int64 `json:"totalBytes"`
			Complete   bool  `json:"complete"`
		}{r.Count, r.TotalBytes, r.Complete})
	}
	return json.Marshal(struct {
		Matches    []GrepMatch `json:"matches"`
		NextOffset int64       `json:"nextOffset"`
		HasMore    bool        `json:"hasMore"`
		TotalBytes int64       `json:"totalBytes"`
		Complete   bool        `json:"complete"`
	}{r.Matches, r.NextOffset, r.HasMore, r.TotalBytes, r.Complete})
}

// GrepToolOutput searches a retained copy of this session for lines that
// match an RE2 pattern, streaming through it without holding it whole. It
// looks the id up in this session only, as ReadToolOutput does.
//
// A line ends at "\n" (a "\r" before it is not part of the line), and a line
// matches exactly when Go's regexp matches it, whatever its length: every
// byte of every line is searched. A pattern that can match only across
// lines (grep.CrossesLines: "a\nb") is refused with ErrArgument, since no
// line could match it. A matching line longer than GrepLineBytes
// shows a window of at most GrepLineBytes around its match, Truncated then
// true and Offset where the window starts; context lines show their first
// GrepLineBytes. A result holds at most Max matches and about GrepBudget
// bytes of text; when more matches follow, HasMore is true and searching
// again from NextOffset returns them, so that following NextOffset visits
// every match once. Searching from an offset inside a line searches the
// rest of that line as its first line; line numbers always count from the
// copy's start. With Count, only the number of matching lines from Offset
// on is returned (Max and Context do not apply).
func (s *Session) GrepToolOutput(ctx context.Context, in GrepInput) (GrepResult, error) {
	const op = "grep_tool_output"
	if err := s.usable(op); err != nil {
		return GrepResult{}, err
	}
	most := in.Max
	if most == 0 {
		most = GrepDefaultMax
	}
	if most < 1 || most > GrepMaxMax {
		return GrepResult{}, errorf(op, ErrArgument, fmt.Sprintf("give a max from 1 to %d, or none for %d", GrepMaxMax, GrepDefaultMax),
			"max %d is out of range", in.Max)
	}
	if in.Context < 0 || in.Context > GrepMaxContext {
		return GrepResult{}, errorf(op, ErrArgument, fmt.Sprintf("give a context from 0 to %d lines", GrepMaxContext),
			"context %d is out of range", in.Context)
	}
	expr := in.Pattern
	if in.IgnoreCase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return GrepResult{}, errorf(op, ErrArgument,
			`patterns use RE2 syntax (Go regexp): no backreferences or lookaround; escape a literal ( [ { . * + ? | \ ^ $ with a backslash`,
			"pattern %s is not a valid regular expression: %s", quoteArg(in.Pattern), patternProblem(err))
	}
	if grep.CrossesLines(re) {
		// Every line would fail to match: "no match" would be false.
		return GrepResult{}, errorf(op, ErrArgument,
			"search for the part of it on one line, and see the lines around each match as context lines",
			"pattern %s matches only across lines (each of its matches holds a newline), and a search matches within one line at a time", quoteArg(in.Pattern))
	}
	info, err := s.stat(ctx, op, in.ID)
	if err != nil {
		return GrepResult{}, err
	}
	if err := s.checkOffset(ctx, op, in.ID, info.TotalBytes, in.Offset); err != nil {
		return GrepResult{}, err
	}
	res, err := grep.Search(store.ReaderAt(ctx, s.e.store, s.ID(), in.ID), info.TotalBytes, re, grep.Options{
		Offset:    in.Offset,
		Context:   in.Context,
		Max:       most,
		Budget:    GrepBudget,
		TextBytes: GrepLineBytes,
		Count:     in.Count,
	})
	if err != nil {
		return GrepResult{}, s.readError(op, in.ID, err)
	}
	if in.Count {
		return GrepResult{Count: res.Count, TotalBytes: info.TotalBytes, Complete: info.Complete}, nil
	}
	out := GrepResult{
		Matches:    make([]GrepMatch, len(res.Matches)),
		NextOffset: res.NextOffset,
		HasMore:    res.HasMore,
		TotalBytes: info.TotalBytes,
		Complete:   info.Complete,
	}
	for i, m := range res.Matches {
		out.Matches[i] = GrepMatch{Line: m.Number, Offset: m.Offset, Text: m.Text, Truncated: m.Truncated,
			Before: contextLines(m.Before), After: contextLines(m.After)}
	}
	return out, nil
}

func contextLines(ls []grep.Line) []ContextLine {
	if len(ls) == 0 {
		return nil
	}
	out := make([]ContextLine, len(ls))
	for i, l := range ls {
		out[i] = ContextLine{Line: l.Number, Offset: l.Offset, Text: l.Text, Truncated: l.Truncated}
	}
	return out
}

// patternProblem returns what regexp found wrong, without its
// "error parsing regexp: " prefix.
func patternProblem(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

// checkOffset applies the reader's rule for offsets to a copy: from 0 to
// its size, and not inside a multi-byte character.
func (s *Session) checkOffset(ctx context.Context, op, id string, total, off int64) error {
	if off < 0 {
		return errorf(op, ErrOffset, fmt.Sprintf("offsets count UTF-8 bytes from 0 to totalBytes (%d)", total),
			"offset %d is negative", off)
	}
	if off > total {
		return errorf(op, ErrOffset, fmt.Sprintf("the copy holds %d bytes, so offsets run from 0 to %d", total, total),
			"offset %d is past the end of the copy", off)
	}
	start, end := max(off-3, 0), min(off+3, total)
	var arr [6]byte
	buf := arr[:end-start]
	if n, err := s.e.store.ReadCopyAt(ctx, s.ID(), id, buf, start); err != nil && !(errors.Is(err, io.EOF) && int64(n) == end-start) {
		return s.readError(op, id, err)
	}
	if inside, before, after := utf8x.Inside(buf, int(off-start)); inside {
		return errorf(op, ErrOffset,
			fmt.Sprintf("the nearest valid offsets are %d (before) and %d (after)", start+int64(before), start+int64(after)),
			"offset %d is inside a multi-byte UTF-8 character", off)
	}
	return nil
}
