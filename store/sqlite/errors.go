package sqlite

import (
	"errors"
	"fmt"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/internal/dberr"
)

// Sentinel errors, matched with errors.Is against an *Error's cause.
var (
	// ErrReadOnly: the database cannot be written (opened read-only, or the
	// file or its directory is not writable).
	ErrReadOnly = errors.New("sqlite: database is read-only")

	// ErrFull: the disk, a quota or the server's resources ran out; the
	// same value as store.ErrFull, which every backend shares.
	ErrFull = store.ErrFull

	// ErrBusy: another connection or process held the database lock for
	// longer than the busy timeout; the same value as store.ErrBusy.
	ErrBusy = store.ErrBusy

	// ErrNewerSchema: the database was written by a newer scrollback; the
	// same value as store.ErrNewerSchema.
	ErrNewerSchema = store.ErrNewerSchema
)

// Error is a failure of the database itself (not of a lookup: those are the
// store package's sentinel errors). It names the operation, the database
// file, what happened and, where there is one, what the user can do.
type Error struct {
	Op   string // what was being done: "open", "save copy", ...
	Path string // the database file
	Err  error  // the cause; errors.Is matches ErrReadOnly, ErrFull, ErrBusy, ErrNewerSchema
	Hint string // what the user can do about it, or ""
}

// Error returns "sqlite: OP: CAUSE (PATH)", then "; HINT" when there is one.
func (e *Error) Error() string { return dberr.Format("sqlite", e.Op, e.Err, e.Path, e.Hint) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports that every failure of the database is store.ErrUnavailable:
// the store cannot do the work, whatever the cause.
func (e *Error) Is(target error) bool { return store.IsUnavailable(target, e.Err) }

// classified wraps a driver error in the sentinel that says what it means,
// keeping the driver error in the chain.
type classified = dberr.Classified

// fullHint is what to do about a full disk.
const fullHint = "free disk space, delete old sessions, or point SCROLLBACK_DB at another file system"

// sqliteError is an error SQLite reported, with its result code: the
// driver's *sqlite.Error, or a reader connection's *libError.
type sqliteError interface {
	error
	Code() int
}

var (
	_ sqliteError = (*sqlite.Error)(nil)
	_ sqliteError = (*libError)(nil)
)

// isBusy reports whether err is SQLite's SQLITE_BUSY: a lock another
// connection holds.
func isBusy(err error) bool {
	var se sqliteError
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// wrap turns a driver or I/O error into an *Error for op on path. Lookup
// sentinels and context errors pass through untouched.
func wrap(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	var ld *lowDiskError
	if errors.As(err, &ld) {
		return &Error{Op: op, Path: path, Err: &classified{Kind: ErrFull, Cause: err}, Hint: fullHint}
	}
	if errors.Is(err, errForeign) {
		return &Error{Op: op, Path: path, Err: err, Hint: "point --db (or SCROLLBACK_DB) at a scrollback database, or at a new file"}
	}
	if errors.Is(err, ErrNewerSchema) {
		return &Error{Op: op, Path: path, Err: err, Hint: "upgrade scrollback, or point --db at another database"}
	}
	var se sqliteError
	if !errors.As(err, &se) {
		return &Error{Op: op, Path: path, Err: err}
	}
	out := &Error{Op: op, Path: path, Err: err}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_READONLY:
		out.Err = &classified{Kind: ErrReadOnly, Cause: err}
		out.Hint = "check the permissions of the file and its directory, or point SCROLLBACK_DB at a writable location"
	case sqlite3.SQLITE_FULL:
		out.Err = &classified{Kind: ErrFull, Cause: err}
		out.Hint = fullHint
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		out.Err = &classified{Kind: ErrBusy, Cause: err}
		out.Hint = "another process held the database lock too long; retry"
	case sqlite3.SQLITE_CANTOPEN:
		out.Err = fmt.Errorf("cannot open the database file: %w", err)
		out.Hint = "check that the path and its directory exist and are accessible"
	case sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT:
		out.Err = fmt.Errorf("not a valid scrollback database: %w", err)
		out.Hint = "the file is damaged or not an SQLite database; move it aside to start afresh"
	case sqlite3.SQLITE_IOERR:
		out.Hint = "check the disk and the file system the database is on"
	}
	return out
}
