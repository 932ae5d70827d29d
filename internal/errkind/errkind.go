// Package errkind holds the error kinds of the product contract (section 3,
// "Errors every tool may give") as sentinel errors every package can reach.
//
// The root package imports the engine's packages, so they cannot import it
// to wrap its sentinels. They wrap these instead, and the root's exported
// sentinels (scrollback.ErrOffset, scrollback.ErrArgument, ...) are these
// same values: errors.Is(err, scrollback.ErrOffset) holds for an offset error
// of filepager or store alike. Each package keeps its own, more precise
// sentinels (filepager.ErrSplit, store.ErrCopyNotFound), made with New so
// that they also match their kind.
package errkind

import "errors"

// The kinds, as sentinels: errors.Is finds one in any error of its kind.
// scrollback.ErrorKind names them as the contract does.
var (
	// NotFound: no such id (output, session, file) for this caller; the same
	// for every other reason it cannot be read.
	NotFound = errors.New("not found")
	// Offset: an offset inside a character, or out of range.
	Offset = errors.New("invalid offset")
	// Argument: any other bad argument.
	Argument = errors.New("invalid argument")
	// Sensitive: read_file refused a sensitive path.
	Sensitive = errors.New("refusing a sensitive path")
	// Unavailable: the store (or the upstream server) cannot be reached.
	Unavailable = errors.New("the store cannot be reached")
)

// New returns a sentinel error whose text is msg and which errors.Is also
// matches against kind, one of the kinds above.
func New(msg string, kind error) error { return &sentinel{msg: msg, kind: kind} }

type sentinel struct {
	msg  string
	kind error
}

func (s *sentinel) Error() string { return s.msg }
func (s *sentinel) Unwrap() error { return s.kind }
