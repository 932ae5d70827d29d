package store

import (
	"context"
	"io"
	"time"

	"github.com/scrollback-dev/scrollback/present"
)

// Default storage bounds. Stored bytes are what the copies' chunks take in
// the database (after compression), not their logical size.
const (
	// DefaultSessionQuota bounds the stored bytes of one session.
	DefaultSessionQuota = 512 << 20
	// DefaultDBCap bounds the stored bytes of the whole database.
	DefaultDBCap = 4 << 30
	// DefaultRetention is how long a session may stay unused before
	// housekeeping deletes it with its copies.
	DefaultRetention = 30 * 24 * time.Hour
)

// ClockSlack is how far ahead of a writer's clock a stored use or read
// time may be and still be kept as it is. A time further ahead was written
// before the clock was set back (or by a host whose clock runs ahead), and
// would otherwise stay in the future for good, since later uses only move
// times forward: such a session would outlive retention, such a copy
// never be least recently read, such a pending copy never be abandoned.
// Backends set it back to their now when they next write.
const ClockSlack = time.Minute

// Limits bound what a store keeps. Saving a copy that takes a session past
// SessionQuota evicts that session's least recently read copies; taking the
// database past DBCap evicts the least recently read copies of any session.
// The copy being saved is never evicted by its own save, so a copy larger
// than a quota is still kept (alone). Zero means unbounded.
type Limits struct {
	SessionQuota int64 `json:"sessionQuota"`
	DBCap        int64 `json:"dbCap"`
}

// DefaultLimits returns DefaultSessionQuota and DefaultDBCap.
func DefaultLimits() Limits {
	return Limits{SessionQuota: DefaultSessionQuota, DBCap: DefaultDBCap}
}

// EvictedError is the error for reading a copy that was evicted under a
// quota. It matches ErrEvicted with errors.Is.
type EvictedError struct {
	ID string    // the copy's id
	At time.Time // when it was evicted
}

// Error says which copy, when, and what to do.
func (e *EvictedError) Error() string {
	return "store: " + present.Evicted(e.ID, e.At)
}

// Is reports whether target is ErrEvicted.
func (e *EvictedError) Is(target error) bool { return target == ErrEvicted }

// Stats describe what a store holds, for the whole database or one
// session. Evictions and RetentionDeletions count since the database was
// made (or, for one session, the copies evicted from it).
type Stats struct {
	Session      string `json:"session,omitempty"` // "" for the whole database
	Sessions     int64  `json:"sessions"`
	Copies       int64  `json:"copies"`
	LogicalBytes int64  `json:"logicalBytes"` // the copies' sizes, as read
	StoredBytes  int64  `json:"storedBytes"`  // what their chunks take, compressed
	// FileBytes is the database's size on disk: the SQLite file and its
	// WAL, or pg_database_size for PostgreSQL.
	FileBytes int64 `json:"fileBytes"`
	// PendingCopies are copies being saved while their command runs,
	// invisible until finished, or left by a process that died mid-save
	// (a later open deletes those once idle for StalePending);
	// PendingStoredBytes is what their chunks take. Neither counts in
	// Copies or StoredBytes, nor toward the quotas.
	PendingCopies      int64  `json:"pendingCopies"`
	PendingStoredBytes int64  `json:"pendingStoredBytes"`
	Evictions          int64  `json:"evictions"`
	RetentionDeletions int64  `json:"retentionDeletions"` // sessions deleted for being idle
	Limits             Limits `json:"limits"`

	// FreeBytes is space the database holds that no copy uses, which saves
	// take before growing it: SQLite's free pages. Nil when the backend
	// does not know it cheaply (PostgreSQL).
	FreeBytes *int64 `json:"freeBytes,omitempty"`
	// DiskFreeBytes is the free space, available to this process, of the
	// file system that holds the database. Nil when not known (PostgreSQL,
	// whose files are the server's; Windows).
	DiskFreeBytes *int64 `json:"diskFreeBytes,omitempty"`
	// LastSaveFailure is the latest save that failed for a reason of the
	// database's own (for one session: the latest in it), or nil.
	LastSaveFailure *SaveFailure `json:"lastSaveFailure,omitempty"`
}

// SaveFailure is a save that failed for a reason of the database's own (a
// full disk, a read-only file, a lock held too long, a server gone), not
// of its input or its caller. A backend records the latest in the
// database, for the stats of any later process; when even that cannot be
// written (the disk is still full), it keeps it in memory, where only its
// own Stats see it until it manages to write it (at the latest, it tries
// again when it closes).
type SaveFailure struct {
	At      time.Time `json:"at"`
	Session string    `json:"session"`
	Error   string    `json:"error"`
	// Full is true when the save failed for lack of space (ErrFull):
	// the backend then gave back what the failed save had taken (its
	// partial rows, SQLite's write-ahead log), so that a later save that
	// fits succeeds.
	Full bool `json:"full"`
}

// Idle is what retention would delete at a cutoff (Housekeeper.CountIdle),
// or deleted (Housekeeper.DeleteIdle): the sessions last used before it,
// and their copies.
type Idle struct {
	Sessions     int64 `json:"sessions"`
	Copies       int64 `json:"copies"`
	LogicalBytes int64 `json:"logicalBytes"` // the copies' sizes, as read
	StoredBytes  int64 `json:"storedBytes"`  // what their chunks take, compressed
}

// CompressionRatio is LogicalBytes / StoredBytes, or 1 when nothing is
// stored.
func (s Stats) CompressionRatio() float64 {
	if s.StoredBytes == 0 {
		return 1
	}
	return float64(s.LogicalBytes) / float64(s.StoredBytes)
}

// Housekeeper is implemented by backends that bound storage over time
// (both of scrollback's). Front ends type-assert a Store to it.
type Housekeeper interface {
	// SetLimits sets the quotas later saves enforce. Call it before
	// sharing the store between goroutines.
	SetLimits(Limits)

	// Stats returns what the database holds, or what one session holds
	// when session is not "" (ErrSessionNotFound when there is none).
	// Sessions are counted across owners: this is the operator's view.
	Stats(ctx context.Context, session string) (Stats, error)

	// DeleteIdle deletes every session (of any owner) last used before
	// cutoff, with its copies, gives the space back where the backend
	// can, and returns what it deleted: the sessions, their copies and
	// the copies' bytes, counted as CountIdle counts them.
	DeleteIdle(ctx context.Context, cutoff time.Time) (Idle, error)

	// CountIdle reports what DeleteIdle with the same cutoff would delete
	// now: the sessions (of any owner) last used before cutoff, their
	// copies and the copies' bytes, counted as Stats counts them. Reads
	// this store noted but has not written down yet count as uses, as they
	// do for DeleteIdle. It changes nothing: no session, copy, use time or
	// counter.
	CountIdle(ctx context.Context, cutoff time.Time) (Idle, error)

	// MarkUsed marks the sessions (of any owner) used now, as a save
	// into them would, so that retention counts their idle time from now.
	// Ids of sessions that do not exist are skipped. A long-running
	// server calls it, before each retention pass and at least twice per
	// retention period, for the sessions its connected clients hold, so
	// that no pass (its own, or another instance's on a shared database)
	// deletes a session under a client however long that client is idle.
	MarkUsed(ctx context.Context, sessions []string) error
}

// RetentionClaimer is implemented by backends that record when a
// retention pass was last claimed (both of scrollback's), so that
// short-lived processes sharing a database (the CLI's commands, with no
// server applying retention) apply it at most once per interval between
// them. Front ends type-assert a Store to it.
type RetentionClaimer interface {
	// ClaimRetention reports whether a retention pass is due at now: no
	// pass was claimed in (now-every, now]. When one is due it records
	// now as the latest claim before it returns true, in one atomic step,
	// so that of several processes asking at once, one is told to run
	// the pass. A claim recorded after now (a clock set back since) does
	// not hold. It changes nothing but the claim: no session, copy or
	// counter that Stats reports.
	ClaimRetention(ctx context.Context, now time.Time, every time.Duration) (bool, error)
}

// Streamer is implemented by backends that can save a copy while it is
// still being produced (both of scrollback's): a command's retained head
// goes to the store as it arrives, so that little is left to save when the
// command ends. Front ends type-assert a Store to it.
type Streamer interface {
	// BeginCopy starts a copy in session that nobody can see (Stat, Read,
	// List, stats, quotas) until it is finished. It returns
	// ErrSessionNotFound when the session does not exist. A pending copy
	// whose writer goes away (a crash) is deleted by a later Open once it
	// has been idle for StalePending.
	BeginCopy(ctx context.Context, session string) (PendingCopy, error)
}

// StalePending is how long a pending copy may go without an Append before
// a later Open deletes it as abandoned. A writer that comes back after that
// gets an error from Append or Finish and saves the copy whole instead.
const StalePending = 10 * time.Minute

// PendingCopy is a copy being saved in pieces. Its methods are not safe
// for concurrent use.
type PendingCopy interface {
	// Append stores p as the copy's next bytes, in its own short write,
	// so that other writers never wait for the producer. len(p) must be a
	// multiple of ChunkSize.
	Append(ctx context.Context, p []byte) error

	// Finish stores the rest of the copy from r after what was appended,
	// makes it visible with meta, and enforces the limits as SaveCopy
	// does, all in one write: on any error nothing becomes visible.
	Finish(ctx context.Context, meta CopyMeta, r io.Reader) (CopyInfo, error)

	// Abort deletes what was appended. Calling it after Finish does
	// nothing.
	Abort(ctx context.Context) error
}
