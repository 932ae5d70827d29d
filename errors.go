package scrollback

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/scrollback-dev/scrollback/internal/errkind"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/store"
)

// Sentinel errors. Every error the engine returns for bad input is an *Error
// wrapping one of these, so callers can branch with errors.Is and still show
// the full message. They are the same values the engine's packages wrap
// (errors.Is(err, ErrOffset) holds for an offset error of filepager, store
// or this package alike), and each belongs to one of the kinds ErrorKind
// names.
var (
	// ErrNotFound is the kind "not_found": no such output, session or file
	// for this caller, whatever the reason it cannot be read. ErrNoOutput
	// and ErrNoSession match it, and so do store.ErrCopyNotFound,
	// store.ErrSessionNotFound and filepager.ErrNotFound.
	ErrNotFound = errkind.NotFound

	// ErrNoOutput is returned for an output id that is not in the current
	// session: one that never existed, or lives in another, a forked or a
	// deleted session. The cases are indistinguishable on purpose.
	ErrNoOutput = errkind.New("no retained output with that id in this session", errkind.NotFound)

	// ErrNoSession is returned for a session id that does not exist or
	// belongs to another owner (indistinguishable on purpose).
	ErrNoSession = errkind.New("no such session", errkind.NotFound)

	// ErrEvicted is the kind "evicted": the copy existed in this session but
	// was evicted under a storage quota. It is store.ErrEvicted.
	ErrEvicted = store.ErrEvicted

	// ErrOffset is the kind "offset": an offset that is negative, past the
	// end of the copy or file, or inside a multi-byte UTF-8 character (a
	// line past the end of a file too).
	ErrOffset = errkind.Offset

	// ErrLimit is returned for a page limit outside its allowed range. It is
	// of the kind "argument": it matches ErrArgument.
	ErrLimit = errkind.New("invalid limit", errkind.Argument)

	// ErrArgument is the kind "argument": any other invalid argument.
	ErrArgument = errkind.Argument

	// ErrSensitive is the kind "sensitive": read_file refused a private
	// key, a credential file or a path matching a deny pattern.
	ErrSensitive = errkind.Sensitive

	// ErrUnavailable is the kind "unavailable": the store cannot be reached
	// or cannot do the work (connection refused, database locked past its
	// timeout, disk full). It is store.ErrUnavailable.
	ErrUnavailable = store.ErrUnavailable
)

// The error kinds of the contract, as ErrorKind names them: over MCP in a
// tool error's _meta "scrollback/error_kind", from the CLI with --json as
// {"error": {"kind", "message"}}.
const (
	KindNotFound    = "not_found"
	KindEvicted     = "evicted"
	KindOffset      = "offset"
	KindArgument    = "argument"
	KindSensitive   = "sensitive"
	KindUnavailable = "unavailable"
)

// ErrorKind names the kind of a tool error: one of the Kind constants. It
// is the one place that decides it, for the MCP servers, the proxy and the
// CLI alike. An error of no known kind is a bad argument (the SDK's own
// schema errors are), except a cancelled or timed-out context, which is
// "unavailable"; a nil error has no kind ("").
func ErrorKind(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrEvicted):
		return KindEvicted
	case errors.Is(err, ErrNotFound):
		return KindNotFound
	case errors.Is(err, ErrOffset):
		return KindOffset
	case errors.Is(err, ErrSensitive):
		return KindSensitive
	case errors.Is(err, ErrArgument):
		return KindArgument
	case errors.Is(err, ErrUnavailable), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return KindUnavailable
	}
	return KindArgument
}

// Error is a tool failure a caller can show as it is: what went wrong and,
// in Hint, what would be right.
type Error struct {
	Op   string // the tool or operation: "read_tool_output", "run_command", ...
	Err  error  // one of the sentinel errors, or an underlying error
	Msg  string // what was wrong, for people and models
	Hint string // what would be right; may be empty
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(": ")
	if e.Msg != "" {
		b.WriteString(e.Msg)
	} else if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	if e.Hint != "" {
		b.WriteString("; ")
		b.WriteString(e.Hint)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is makes a call cut short by the end of its context match ErrUnavailable,
// the sentinel of the kind ErrorKind gives it ("unavailable"), beside the
// context.Canceled or context.DeadlineExceeded it wraps: every tool error's
// kind is a sentinel errors.Is finds.
func (e *Error) Is(target error) bool {
	return target == ErrUnavailable && e != nil && e.Err != nil &&
		(errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, context.DeadlineExceeded))
}

func errorf(op string, err error, hint string, format string, args ...any) *Error {
	return &Error{Op: op, Err: err, Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// quoteArg quotes a caller-supplied value for an error message, cut short
// (present.Clip) so that a 10 MiB argument does not come back as a 10 MiB
// error.
func quoteArg(s string) string {
	const max = 80
	if len(s) > max {
		return strconv.Quote(present.Clip(s, max))
	}
	return strconv.Quote(s)
}
