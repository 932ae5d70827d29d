package preview

import (
	"errors"
	"fmt"

	"github.com/scrollback-dev/scrollback/internal/errkind"
)

// Sentinel errors. RenderAt returns them wrapped in an *Error. ErrSize and
// ErrLines are scrollback.ErrArgument too.
var (
	// ErrSize is returned for a negative size.
	ErrSize = errkind.New("preview: invalid size", errkind.Argument)

	// ErrLines is returned for a line count that cannot be right for the
	// data: more lines than bytes, no lines for non-empty data, or fewer
	// lines than the newlines seen in the bytes read.
	ErrLines = errkind.New("preview: invalid line count", errkind.Argument)

	// ErrRead is returned when the io.ReaderAt fails.
	ErrRead = errors.New("preview: cannot read the data")
)

// Error is a failure of RenderAt: what was wrong and, in Hint, what would be
// right.
type Error struct {
	Err  error  // one of the sentinel errors
	Msg  string // what was wrong
	Hint string // what would be right; may be empty
	// Cause is the underlying error, for ErrRead; nil otherwise.
	Cause error
}

func (e *Error) Error() string {
	s := e.Err.Error()
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

// Unwrap returns the sentinel error and, when there is one, the cause, so
// that errors.Is matches either.
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

func errorf(err error, hint, format string, args ...any) *Error {
	return &Error{Err: err, Msg: fmt.Sprintf(format, args...), Hint: hint}
}
