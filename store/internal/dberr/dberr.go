// Package dberr holds what the SQL backends' errors share: the one format of
// a failure of the database itself, and the classified driver error that
// keeps both the sentinel saying what it means and the driver's own error.
// store/sqlite and store/postgres build their *Error on it.
package dberr

import (
	"strings"
)

// Format returns "BACKEND: OP: CAUSE", then " (WHERE)" when where is known
// (the database file, or host:port/database), then "; HINT" when there is
// one: the format of every scrollback error with a hint. CAUSE is cause's
// text without a leading "BACKEND: " or "store: ".
func Format(backend, op string, cause error, where, hint string) string {
	s := backend + ": " + op + ": " + trimPrefix(cause.Error(), backend)
	if where != "" {
		s += " (" + where + ")"
	}
	if hint != "" {
		s += "; " + hint
	}
	return s
}

func trimPrefix(s, backend string) string {
	return strings.TrimPrefix(strings.TrimPrefix(s, backend+": "), "store: ")
}

// Classified is a driver error with the sentinel that says what it means;
// errors.Is and errors.As find both.
type Classified struct {
	Kind  error // a sentinel of the backend or of package store
	Cause error // the driver's error
}

// Error returns the kind's text, then the driver's when it says more than
// the kind already does.
func (c *Classified) Error() string {
	kind, cause := c.Kind.Error(), c.Cause.Error()
	if bare := kind[strings.LastIndex(kind, ": ")+1:]; strings.HasPrefix(cause, strings.TrimSpace(bare)) {
		return kind
	}
	return kind + ": " + cause
}

// Unwrap returns the kind and the cause.
func (c *Classified) Unwrap() []error { return []error{c.Kind, c.Cause} }
