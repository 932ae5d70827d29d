// Package store defines where scrollback keeps sessions and retained copies.
//
// A Store holds sessions (each owned by one principal) and, per session, the
// retained copies of tool output that did not fit a preview. Every backend
// (SQLite in store/sqlite, PostgreSQL in store/postgres) implements the same
// contract and passes the same conformance suite, store/storetest.
//
// Copies are addressed by (session, copy id) only: a copy id is never looked
// up across sessions, so a caller holding an id from one session can never
// read it through another. Owners scope sessions the same way: a session id
// owned by another principal reads exactly like one that does not exist.
package store

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"io"
	"time"

	"github.com/scrollback-dev/scrollback/internal/errkind"
)

// ChunkSize is the size of the fixed-size chunks copies are stored in. A page
// of at most 4 KiB therefore touches one chunk, or two when it straddles a
// chunk boundary.
const ChunkSize = 64 << 10

// Sentinel errors. Backends wrap them (errors.Is works) and never return a
// driver error in their place when one of these applies. Each also matches
// its kind among the root package's (scrollback.ErrNotFound, ErrOffset,
// ErrUnavailable, ...), so a caller can branch on either.
var (
	// ErrSessionNotFound: no session with that id for that owner. Returned
	// alike for an id that never existed, was deleted, or belongs to another
	// owner, so that existence elsewhere is never revealed.
	ErrSessionNotFound = errkind.New("store: no such session", errkind.NotFound)

	// ErrCopyNotFound: no retained copy with that id in that session. Returned
	// alike for an id that never existed, lives in another (or a forked, or a
	// deleted) session, or whose save never completed.
	ErrCopyNotFound = errkind.New("store: no retained output with that id in this session", errkind.NotFound)

	// ErrOffset: a read offset is negative or past the end of the copy.
	ErrOffset = errkind.New("store: offset out of range", errkind.Offset)

	// ErrEvicted: the copy existed in this session but was evicted under a
	// storage quota. A backend returns an error wrapping it (saying when)
	// instead of ErrCopyNotFound for such a copy; the source must be re-run
	// to see it again.
	ErrEvicted = errors.New("store: copy evicted under a storage quota")

	// ErrUnavailable: the database cannot be reached or cannot do the work
	// (connection refused or lost, locked past its timeout, read-only, full,
	// damaged). Every backend error that is not one of the lookups above
	// matches it; the backend's own sentinels say which.
	ErrUnavailable = errkind.Unavailable

	// ErrFull: the disk, a file system quota or the server's resources ran
	// out. Matches ErrUnavailable too.
	ErrFull = errkind.New("store: database or disk is full", errkind.Unavailable)

	// ErrBusy: another connection or process held the database's write
	// lock past the backend's busy timeout. Matches ErrUnavailable too. A
	// caller gains nothing by retrying at once: it would wait as long
	// again.
	ErrBusy = errkind.New("store: database is locked", errkind.Unavailable)

	// ErrNewerSchema: the database was written by a newer scrollback.
	// Matches ErrUnavailable too.
	ErrNewerSchema = errkind.New("store: database schema is newer than this program", errkind.Unavailable)
)

// IsUnavailable is the Is method of a backend's error type whose cause is
// cause: it matches ErrUnavailable unless the cause is a lookup (not found,
// offset), which a backend error must never hide.
func IsUnavailable(target, cause error) bool {
	return target == ErrUnavailable && !errors.Is(cause, errkind.NotFound) && !errors.Is(cause, errkind.Offset)
}

// Session is one conversation's state: the owner it belongs to and, when it
// was forked, the session it was forked from. A fork shares no copies.
type Session struct {
	ID        string    `json:"id"`               // the session's id
	Owner     string    `json:"owner"`            // the principal that owns it
	Parent    string    `json:"parent,omitempty"` // the session it was forked from; "" when not a fork
	CreatedAt time.Time `json:"created_at"`       // when it was made
	Copies    int       `json:"copies"`           // number of retained copies (as listed)
	Bytes     int64     `json:"totalBytes"`       // sum of their sizes (as listed)
	// LastUsedAt is when a copy was last saved into or read from the
	// session (its creation time before that). Retention deletes sessions
	// by it. Reads may be recorded a little late: a backend batches them.
	LastUsedAt time.Time `json:"last_used_at"`
}

// CopyMeta describes a copy being saved; it is stored beside the bytes.
type CopyMeta struct {
	// Tool is the tool whose result this is ("run_command", "run_code", an
	// upstream tool name behind the proxy).
	Tool string
	// Source says what produced it, for people listing copies: the command
	// line, the file, the upstream call.
	Source string
	// Complete is false when the copy may lack part of what the tool
	// produced (a capture cap, the copy cap or an upstream limit was crossed).
	Complete bool
	// OmittedBytes and OmittedLines describe a gap in the copy: bytes the
	// tool produced that the copy does not hold (zero when none).
	OmittedBytes int64
	OmittedLines int64
}

// CopyInfo is what a Store knows about a saved copy.
type CopyInfo struct {
	ID           string    `json:"id"`                     // the copy's id: an output_id
	Session      string    `json:"session"`                // the session that holds it
	Tool         string    `json:"tool"`                   // CopyMeta.Tool: the tool whose result it is
	Source       string    `json:"source"`                 // CopyMeta.Source: what produced it, for people listing copies
	TotalBytes   int64     `json:"totalBytes"`             // the copy's length in bytes
	Lines        int64     `json:"lines"`                  // newline-terminated lines, plus one for a final unterminated line
	Complete     bool      `json:"complete"`               // CopyMeta.Complete: the copy holds all the tool produced
	OmittedBytes int64     `json:"omittedBytes,omitempty"` // CopyMeta.OmittedBytes: bytes a gap in the copy dropped
	OmittedLines int64     `json:"omittedLines,omitempty"` // CopyMeta.OmittedLines: lines a gap in the copy dropped
	CreatedAt    time.Time `json:"created_at"`             // when the copy was saved
}

// Store is the contract every backend implements. All methods are safe for
// concurrent use, including by several processes sharing one database.
type Store interface {
	// CreateSession makes a new, empty session owned by owner.
	CreateSession(ctx context.Context, owner string) (Session, error)

	// DefaultSession returns owner's default session for this database,
	// creating it on first use. Concurrent first uses agree on one session.
	DefaultSession(ctx context.Context, owner string) (Session, error)

	// GetSession returns the session, or ErrSessionNotFound when there is no
	// session with that id owned by owner.
	GetSession(ctx context.Context, owner, id string) (Session, error)

	// ListSessions returns owner's sessions, oldest first, with their copy
	// counts and byte totals filled in.
	ListSessions(ctx context.Context, owner string) ([]Session, error)

	// ForkSession makes a new session owned by owner whose Parent is id. The
	// fork starts empty: it does not share the parent's copies. Returns
	// ErrSessionNotFound as GetSession does.
	ForkSession(ctx context.Context, owner, id string) (Session, error)

	// DeleteSession deletes the session and every copy in it, reclaiming
	// their space. Returns ErrSessionNotFound as GetSession does.
	DeleteSession(ctx context.Context, owner, id string) error

	// SaveCopy stores everything r yields as a new copy in session and
	// returns its info with a fresh, unguessable id. It streams: memory use
	// does not grow with the copy's size. The copy becomes visible (to Stat,
	// Read, List) only once it is saved whole; on any error, or if the
	// process dies mid-save, no part of it is ever visible. It does not check
	// the session's owner (the caller has done so) but returns
	// ErrSessionNotFound when the session does not exist.
	SaveCopy(ctx context.Context, session string, meta CopyMeta, r io.Reader) (CopyInfo, error)

	// StatCopy returns the copy's info, or ErrCopyNotFound.
	StatCopy(ctx context.Context, session, id string) (CopyInfo, error)

	// ReadCopyAt reads len(p) bytes of the copy starting at byte offset off,
	// with io.ReaderAt semantics: it returns n < len(p) only together with
	// an error, io.EOF when the copy ends first. off == TotalBytes returns
	// 0, io.EOF. A negative offset or one past the end returns ErrOffset;
	// an unknown copy ErrCopyNotFound.
	ReadCopyAt(ctx context.Context, session, id string, p []byte, off int64) (int, error)

	// StatReadCopyAt is StatCopy and ReadCopyAt at once, in one query (one
	// snapshot): what reading a page needs. n and err are ReadCopyAt's. The
	// info is the copy's whenever the copy is found, also with io.EOF,
	// ErrOffset or a damaged copy's error, so that a caller can say what
	// the valid offsets are; it is the zero CopyInfo with ErrCopyNotFound,
	// an evicted copy's error, or a failure to query.
	StatReadCopyAt(ctx context.Context, session, id string, p []byte, off int64) (info CopyInfo, n int, err error)

	// ListCopies returns the session's copies, oldest first.
	ListCopies(ctx context.Context, session string) ([]CopyInfo, error)

	// CopySession returns the id of the session, owned by owner, that
	// holds copy id or held it until it was evicted: what a reader scoped
	// to an owner rather than to one session (an MCP resources/read)
	// looks the copy up by. ErrCopyNotFound when none of owner's sessions
	// does, whether or not another owner's does; a copy still being saved
	// is not found.
	CopySession(ctx context.Context, owner, id string) (string, error)

	// Close releases the backend's resources.
	Close() error
}

// NewID returns a fresh opaque id: prefix followed by 128 random bits in
// lower-case base32 (26 characters). Ids are unguessable and safe to put in
// a URL, a file name or a shell command.
func NewID(prefix string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("store: crypto/rand failed: " + err.Error()) // cannot happen on supported platforms
	}
	return prefix + idEncoding.EncodeToString(b[:])
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// ValidID reports whether s has the shape of an id made by NewID with the
// given prefix. Backends may use it to reject ids that could never exist
// (paths, SQL) before touching the database; they must still return the
// ordinary not-found error for them.
func ValidID(prefix, s string) bool {
	if len(s) != len(prefix)+26 || s[:len(prefix)] != prefix {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// Id prefixes.
const (
	SessionPrefix = "s_"
	CopyPrefix    = "out_"
)

// ReaderAt adapts one copy to io.ReaderAt, for code that pages or greps
// through a copy with the standard library's tools.
func ReaderAt(ctx context.Context, s Store, session, id string) io.ReaderAt {
	return readerAt{ctx, s, session, id}
}

type readerAt struct {
	ctx         context.Context
	s           Store
	session, id string
}

func (r readerAt) ReadAt(p []byte, off int64) (int, error) {
	return r.s.ReadCopyAt(r.ctx, r.session, r.id, p, off)
}
