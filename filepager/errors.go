package filepager

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// Sentinel errors. Every error returned by Pager.Read is an *Error whose Err
// is, or wraps, one of these (errors.Is works), or an I/O error from the
// operating system.
var (
	// ErrInvalid: the request itself is malformed (no path, a negative line
	// or limit, an unusable option).
	ErrInvalid = errors.New("filepager: invalid request")

	// ErrNotFound: the file does not exist.
	ErrNotFound = errors.New("filepager: no such file")

	// ErrIsDir: the path names a directory.
	ErrIsDir = errors.New("filepager: is a directory")

	// ErrNotRegular: the path names something other than a regular file or
	// directory (a device, a FIFO, a socket).
	ErrNotRegular = errors.New("filepager: not a regular file")

	// ErrOutsideRoot: the resolved path lies outside Options.Root.
	ErrOutsideRoot = errors.New("filepager: path is outside the allowed root")

	// ErrSensitive: the path (as given or resolved) is a private key, a
	// credential file or matches a deny pattern.
	ErrSensitive = errors.New("filepager: refusing to read a sensitive file")

	// ErrBinary: the file has a NUL byte in its first 8 KiB.
	ErrBinary = errors.New("filepager: binary file")

	// ErrLine: the requested line is past the end of the file.
	ErrLine = errors.New("filepager: line past the end of the file")

	// ErrOffset: the byte offset is negative or past the end of the file.
	ErrOffset = errors.New("filepager: byte offset out of range")

	// ErrSplit: the byte offset falls inside a multi-byte UTF-8 character.
	ErrSplit = errors.New("filepager: byte offset inside a character")
)

// Error is the error Pager.Read returns: what was being done, to which path,
// what went wrong, and a hint for the user (or model) on what to do instead.
type Error struct {
	Op   string // "open" (path checks) or "read" (locating a line or offset)
	Path string // the path as given in the request
	Err  error  // a sentinel above, possibly wrapped with details, or an I/O error
	Hint string // what would work instead; may be empty
}

// Error returns "filepager: OP PATH: DETAIL (HINT)".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("filepager: ")
	b.WriteString(e.Op)
	if e.Path != "" {
		b.WriteString(" ")
		b.WriteString(shortPath(e.Path))
	}
	b.WriteString(": ")
	var pe *fs.PathError
	switch {
	case errors.As(e.Err, &pe) && e.Path != "":
		// The path stands once, shortened, above; the system's error
		// would repeat it whole.
		b.WriteString(pe.Op + ": " + pe.Err.Error())
	case e.Err != nil:
		b.WriteString(strings.TrimPrefix(e.Err.Error(), "filepager: "))
	}
	if e.Hint != "" {
		b.WriteString(" (")
		b.WriteString(e.Hint)
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// maxPathInError bounds how much of a path an error message repeats: a
// caller that sent a 10 MiB path must not get a 10 MiB error back.
const maxPathInError = 256

// shortPath returns p, or its start and end around an ellipsis when it is
// longer than maxPathInError, cut on UTF-8 boundaries.
func shortPath(p string) string {
	if len(p) <= maxPathInError {
		return p
	}
	half := maxPathInError / 2
	return fmt.Sprintf("%s…(%d bytes)…%s", utf8x.Cut(p, half), len(p), utf8x.Tail(p, half))
}
