package postgres

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/internal/dberr"
)

// Sentinel errors, matched with errors.Is against an *Error's cause.
var (
	// ErrUnavailable: the database server cannot be reached, or the
	// connection to it was lost. Calls made once it is back succeed: the
	// pool reconnects on its own.
	ErrUnavailable = errors.New("postgres: database unavailable")

	// ErrNewerSchema: the database was written by a newer scrollback; the
	// same value as store.ErrNewerSchema.
	ErrNewerSchema = store.ErrNewerSchema

	// ErrFull: the disk, a quota or the server's resources ran out; the
	// same value as store.ErrFull, which every backend shares.
	ErrFull = store.ErrFull

	// ErrBusy: a statement waited for a lock past lock_timeout; the same
	// value as store.ErrBusy.
	ErrBusy = store.ErrBusy
)

// Error is a failure of the database itself (not of a lookup: those are the
// store package's sentinel errors). It names the operation, the server
// (host, port and database, never the password), what happened and, where
// there is one, what the user can do.
type Error struct {
	Op     string // what was being done: "open", "save copy", ...
	Server string // host:port/database
	Err    error  // the cause; errors.Is matches ErrUnavailable, ErrNewerSchema, ErrFull, ErrBusy
	Hint   string // what the user can do about it, or ""
}

// Error returns "postgres: OP: CAUSE (SERVER)", then "; HINT" when there is
// one. The server is left out when not known (a URL that does not parse).
func (e *Error) Error() string { return dberr.Format("postgres", e.Op, e.Err, e.Server, e.Hint) }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports that every failure of the database is store.ErrUnavailable:
// the store cannot do the work, whatever the cause.
func (e *Error) Is(target error) bool { return store.IsUnavailable(target, e.Err) }

// classified wraps a driver error in the sentinel that says what it means,
// keeping the driver error in the chain.
type classified = dberr.Classified

// wrap turns a driver or I/O error into an *Error for op. The store's lookup
// sentinels, context errors and errors that are already an *Error pass
// through untouched, so callers can compare them with errors.Is directly.
func (db *DB) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) ||
		errors.Is(err, store.ErrSessionNotFound) || errors.Is(err, store.ErrCopyNotFound) || errors.Is(err, store.ErrOffset) ||
		errors.Is(err, store.ErrEvicted) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("postgres: %s: %w", op, err)
	}
	return classify(op, db.server, err)
}

// classify builds the *Error for a driver error, with a hint for the kinds
// of failure a user can do something about.
func classify(op, server string, err error) *Error {
	out := &Error{Op: op, Server: server, Err: err}
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe):
		switch {
		case pe.Code == "3D000": // invalid_catalog_name
			out.Hint = "the database does not exist: create it (createdb) or fix the database name in the URL"
		case strings.HasPrefix(pe.Code, "28"): // invalid authorization
			out.Hint = "the server refused the user or password: check them in the URL (or ~/.pgpass) and the server's pg_hba.conf"
		case pe.Code == "42501": // insufficient_privilege
			out.Hint = "the user may not create or change tables here: grant it CREATE on the database's schema, or use another user"
		case pe.Code == "55P03": // lock_not_available: waited past lock_timeout
			out.Err = &classified{Kind: store.ErrBusy, Cause: err}
			out.Hint = "another connection held a lock past lock_timeout (10 s unless the URL sets it): an instance may be stuck in a save, or a long transaction running; it fails the same way until that ends"
		case pe.Code == "53300": // too_many_connections
			out.Err = &classified{Kind: ErrUnavailable, Cause: err}
			out.Hint = "the server has no free connections: lower pool_max_conns in the URL or raise the server's max_connections"
		case strings.HasPrefix(pe.Code, "53"): // insufficient_resources
			out.Err = &classified{Kind: ErrFull, Cause: err}
			out.Hint = "free disk space on the database server or delete old sessions"
		case strings.HasPrefix(pe.Code, "08"), strings.HasPrefix(pe.Code, "57P"): // connection exception, server shutting down
			out.Err = &classified{Kind: ErrUnavailable, Cause: err}
			out.Hint = "the connection to the server was lost; retry once it is back (the pool reconnects)"
		}
	case tlsFailure(err):
		// Before lostConnection, which a failed handshake also is: the
		// server is there, and retrying changes nothing.
		out.Hint = "the TLS connection to the server failed: set sslmode in the URL to what the server offers " +
			"(sslmode=disable for a server without TLS), or name the CA that signed its certificate with sslrootcert=FILE"
	case lostConnection(err):
		out.Err = &classified{Kind: ErrUnavailable, Cause: err}
		out.Hint = "check that PostgreSQL is running and reachable at " + server + " (pg_isready), then retry; the pool reconnects on its own"
	}
	return out
}

// lostConnection reports whether err means the server could not be reached
// or the connection broke, as opposed to the server refusing a statement.
func lostConnection(err error) bool {
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// tlsFailure reports whether err is a failure to set up TLS with the
// server: it refused TLS, or its certificate was not trusted.
func tlsFailure(err error) bool {
	var cv *tls.CertificateVerificationError
	var ua x509.UnknownAuthorityError
	var he x509.HostnameError
	var ci x509.CertificateInvalidError
	var ae tls.AlertError
	var rh tls.RecordHeaderError
	if errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci) ||
		errors.As(err, &ae) || errors.As(err, &rh) {
		return true
	}
	// pgconn makes these with errors.New or says them only in its text.
	msg := err.Error()
	return strings.Contains(msg, "server refused TLS connection") || strings.Contains(msg, "tls error")
}

// retryable reports whether a failed idempotent call is worth one more try:
// the connection it ran on was broken (typically a pooled connection that
// died with a server restart), so a fresh one may succeed.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P")
	}
	return lostConnection(err)
}
