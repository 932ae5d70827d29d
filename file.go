package scrollback

import (
	"context"
	"errors"
	"strings"

	"github.com/scrollback-dev/scrollback/filepager"
)

// ReadFileInput is the input of read_file.
type ReadFileInput struct {
	// Path is the file to read: "~/" at its start is the home directory,
	// and a relative path is relative to Options.File.Root when one is
	// set, else to the working directory.
	Path string `json:"path"`
	// Line is the 1-based line to start at; 0 means 1.
	Line int64 `json:"line,omitempty"`
	// Limit is the most lines to return; 0 means 2000. A page also stops
	// at the file page budget (Options.File.PageBytes).
	Limit int64 `json:"limit,omitempty"`
	// ByteOffset, when not nil, is the byte position to continue from (a
	// nextByteOffset) and wins over Line.
	ByteOffset *int64 `json:"byte_offset,omitempty"`
}

// FilePage is one page of a file: the result of read_file.
type FilePage = filepager.Page

// ReadFile returns one page of a file. Files are read where they are, not
// retained: the file itself is the copy. Sensitive paths, paths outside the
// configured root and binary files are refused.
func (s *Session) ReadFile(ctx context.Context, in ReadFileInput) (FilePage, error) {
	if err := s.usable("read_file"); err != nil {
		return FilePage{}, err
	}
	return s.e.ReadFile(ctx, in)
}

// ReadFile is Session.ReadFile; reading a file needs no session.
func (e *Engine) ReadFile(ctx context.Context, in ReadFileInput) (FilePage, error) {
	const op = "read_file"
	if err := e.usable(op, false); err != nil {
		return FilePage{}, err
	}
	if in.Path == "" {
		return FilePage{}, errorf(op, ErrArgument, `pass the file's path, e.g. {"path": "go.mod"}`, "path is required")
	}
	if i := strings.IndexByte(in.Path, 0); i >= 0 {
		return FilePage{}, errorf(op, ErrArgument, "pass the path without it (a JSON \\u0000 escape, or a string cut from binary data?)",
			"the path %q holds a NUL byte at byte %d, which no file name can", in.Path, i)
	}
	if in.Line < 0 {
		return FilePage{}, errorf(op, ErrArgument, "lines count from 1", "line %d is negative", in.Line)
	}
	if in.Limit < 0 {
		return FilePage{}, errorf(op, ErrArgument, "give a positive number of lines, or none for 2000", "limit %d is negative", in.Limit)
	}
	p, err := e.files.Read(ctx, filepager.Request{Path: in.Path, Line: in.Line, Limit: in.Limit, ByteOffset: in.ByteOffset})
	if err != nil {
		var fe *filepager.Error
		if errors.As(err, &fe) && fe.Hint != "" {
			bare := *fe
			bare.Hint = ""
			return FilePage{}, &Error{Op: op, Err: err, Msg: strings.TrimPrefix(bare.Error(), "filepager: "), Hint: fe.Hint}
		}
		return FilePage{}, &Error{Op: op, Err: err, Msg: strings.TrimPrefix(err.Error(), "filepager: ")}
	}
	return p, nil
}
