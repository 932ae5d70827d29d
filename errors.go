package scrollback

import (
	"errors"
	"fmt"
	"strings"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// Sentinel errors. Every error the engine returns for bad input is an *Error
// wrapping one of these, so callers can branch with errors.Is and still show
// the full message.
var (
	// ErrNoOutput is returned for an output id that is not in the current
	// session: one that never existed, or lives in another, a forked or a
	// deleted session. The cases are indistinguishable on purpose.
	ErrNoOutput = errors.New("no retained output with that id in this session")

	// ErrNoSession is returned for a session id that does not exist or
	// belongs to another owner (indistinguishable on purpose).
	ErrNoSession = errors.New("no such session")

	// ErrOffset is returned for an offset that is negative, past the end of
	// the copy, or inside a multi-byte UTF-8 character.
	ErrOffset = errors.New("invalid offset")

	// ErrLimit is returned for a page limit outside its allowed range.
	ErrLimit = errors.New("invalid limit")

	// ErrArgument is returned for any other invalid argument.
	ErrArgument = errors.New("invalid argument")
)

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

func errorf(op string, err error, hint string, format string, args ...any) *Error {
	return &Error{Op: op, Err: err, Msg: fmt.Sprintf(format, args...), Hint: hint}
}

// quoteArg quotes a caller-supplied value for an error message, cut short
// so that a 10 MiB argument does not come back as a 10 MiB error.
func quoteArg(s string) string {
	const max = 80
	if len(s) > max {
		return fmt.Sprintf("%q… (%d bytes)", utf8x.Cut(s, max), len(s))
	}
	return fmt.Sprintf("%q", s)
}
