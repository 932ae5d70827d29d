package filepager

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/scrollback-dev/scrollback/internal/errkind"
	"github.com/scrollback-dev/scrollback/present"
)

// Sentinel errors. Every error returned by Pager.Read is an *Error whose Err
// is, or wraps, one of these (errors.Is works), or an I/O error from the
// operating system. Each also matches its kind among the root package's
// sentinels: ErrLine, ErrOffset and ErrSplit are scrollback.ErrOffset,
// ErrSensitive is scrollback.ErrSensitive, ErrNotFound is
// scrollback.ErrNotFound, and the rest are scrollback.ErrArgument.
var (
	// ErrInvalid: the request itself is malformed (no path, a negative line
	// or limit, an unusable option).
	ErrInvalid = errkind.New("filepager: invalid request", errkind.Argument)

	// ErrNotFound: the file does not exist.
	ErrNotFound = errkind.New("filepager: no such file", errkind.NotFound)

	// ErrIsDir: the path names a directory.
	ErrIsDir = errkind.New("filepager: is a directory", errkind.Argument)

	// ErrNotRegular: the path names something other than a regular file or
	// directory (a device, a FIFO, a socket).
	ErrNotRegular = errkind.New("filepager: not a regular file", errkind.Argument)

	// ErrOutsideRoot: the resolved path lies outside Options.Root, whether
	// or not it exists.
	ErrOutsideRoot = errkind.New("filepager: path is outside the allowed root", errkind.Argument)

	// ErrLoop: resolving the path's symlinks went round a loop.
	ErrLoop = errkind.New("filepager: symlink loop", errkind.Argument)

	// ErrSize: the file is not the size it reports: it changed size while
	// it was read, or it reports none (a /proc file) and holds more than
	// such a file may (1 MiB).
	ErrSize = errkind.New("filepager: the file is not the size it reports", errkind.Argument)

	// ErrSensitive: the path (as given or resolved) is a private key, a
	// credential file or matches a deny pattern.
	ErrSensitive = errkind.New("filepager: refusing to read a sensitive file", errkind.Sensitive)

	// ErrBinary: the file has a NUL byte in its first 8 KiB.
	ErrBinary = errkind.New("filepager: binary file", errkind.Argument)

	// ErrLine: the requested line is past the end of the file.
	ErrLine = errkind.New("filepager: line past the end of the file", errkind.Offset)

	// ErrOffset: the byte offset is negative or past the end of the file.
	ErrOffset = errkind.New("filepager: byte offset out of range", errkind.Offset)

	// ErrSplit: the byte offset falls inside a multi-byte UTF-8 character.
	ErrSplit = errkind.New("filepager: byte offset inside a character", errkind.Offset)
)

// Error is the error Pager.Read returns: what was being done, to which path,
// what went wrong, and a hint for the user (or model) on what to do instead.
type Error struct {
	Op   string // "open" (path checks) or "read" (locating a line or offset)
	Path string // the path as given in the request
	Err  error  // a sentinel above, possibly wrapped with details, or an I/O error
	Hint string // what would work instead; may be empty
}

// Error returns "filepager: OP PATH: DETAIL", then "; HINT" when there is
// one: the format of every scrollback error with a hint.
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
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// maxPathInError bounds how much of a path an error message repeats: a
// caller that sent a 10 MiB path must not get a 10 MiB error back.
const maxPathInError = 256

// shortPath returns p, or its start and end around the cut mark when it is
// longer than maxPathInError (present.ClipMiddle).
func shortPath(p string) string { return present.ClipMiddle(p, maxPathInError) }
