// Package sqlite is the embedded store.Store backend: every session and
// retained copy in one SQLite file, through the pure-Go modernc.org/sqlite
// driver (no cgo).
//
// The file is in WAL mode, so readers never wait for the writer, and every
// write runs in a BEGIN IMMEDIATE transaction with a busy timeout, so several
// processes sharing the file queue for the write lock instead of failing.
// A copy is stored as fixed-size chunks of store.ChunkSize bytes: saving
// streams its input one chunk at a time inside one transaction (a crash
// mid-save leaves nothing visible), and reading a 4 KiB page touches one
// chunk, or two when the page straddles a boundary. The file uses
// incremental auto-vacuum, so deleting a session gives its space back to the
// file system.
//
// Database failures (a read-only file, a full disk, a lock held too long)
// are returned as *Error, which names the operation and the file and
// matches ErrReadOnly, ErrFull or ErrBusy with errors.Is.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/internal/chunkcodec"
	"github.com/scrollback-dev/scrollback/store/internal/readlog"
)

// Options configure Open. The zero value (or nil) is a read-write database
// with the defaults below.
type Options struct {
	// ReadOnly opens an existing database for reading only (SQLite's
	// mode=ro): the file is never created or migrated, and every write
	// fails with an *Error matching ErrReadOnly. In a directory it cannot
	// write (a read-only mount, another user's directory), where SQLite
	// cannot make the write-ahead log's files, a database whose log is
	// gone or empty is read as an unchanging file (immutable=1): a
	// process that writes it meanwhile may go unseen.
	ReadOnly bool

	// BusyTimeout is how long a statement waits for a lock held by another
	// connection or process before failing with ErrBusy. Default 10s.
	BusyTimeout time.Duration

	// MaxOpenConns bounds the connection pool (each connection has its own
	// page cache). Default 8. Page reads (ReadCopyAt, StatReadCopyAt) run
	// on connections of their own besides, one for each of GOMAXPROCS
	// readers, at most MaxOpenConns.
	MaxOpenConns int

	// RawChunks stores new chunks uncompressed, as version 1 did. Reads
	// of compressed chunks still work. By default a chunk is compressed
	// with zstd when that saves space; this is the reference the
	// benchmarks measure compression against.
	RawChunks bool

	// LeaveLog makes Close leave the write-ahead log as it is, instead of
	// copying it into the database file (with two fsyncs) and deleting
	// it: for a short-lived process (scrollback run) whose exit should not
	// wait for the disk. The log is copied in later: by the next
	// BeginCopy (of this process or another), which checkpoints before
	// its first chunk, while the command that makes the copy runs; or by
	// Close itself once the log holds more than LeaveLogPages pages (as
	// many small saves, never begun as pending copies, leave it); so it
	// stays bounded. Other processes read it as usual. A
	// save committed to the log survives the process crashing, not a
	// crash of the machine before a checkpoint (docs/storage.md).
	LeaveLog bool

	// PageCacheKiB bounds each connection's page cache (PRAGMA
	// cache_size), in KiB; 0 keeps SQLite's default, 2,000 KiB. A process
	// that saves one copy and exits (scrollback run) gains from a small
	// one: SQLite allocates its cache a page at a time as a transaction
	// dirties pages, so saving 8 MiB of output fills the whole default
	// cache with fresh memory, each 4 KiB a page fault (a fifth of that
	// process's faults), while a small cache reuses the same few pages
	// (what does not fit is written to the log early, as it would be at
	// commit). Reads go through the memory map (mmapSize), not this
	// cache.
	PageCacheKiB int
}

// LeaveLogPages is the size of the write-ahead log, in pages (4 KiB
// each, 16 MiB), past which a commit checkpoints it when Options.LeaveLog
// is set: twice a copy of the default 8 MiB cap, so that saving one
// never checkpoints midway. SQLite's default is 1000 pages.
const LeaveLogPages = 4096

// Defaults for Options.
const (
	DefaultBusyTimeout  = 10 * time.Second
	DefaultMaxOpenConns = 8
)

// DB is a store.Store kept in one SQLite file. It is safe for concurrent use
// by many goroutines and, through the file's locks, by several processes.
type DB struct {
	path     string
	readOnly bool
	// immutable: opened read-only as a file nothing changes (SQLite's
	// immutable=1), where the log's files cannot be made (see Open).
	immutable bool
	leaveLog  bool // Options.LeaveLog
	raw       bool // Options.RawChunks
	db        *sql.DB

	// writeSem admits one write transaction of this process at a time, so
	// that the goroutines of one process queue in Go (honouring their
	// contexts) instead of polling SQLite's busy handler against each other.
	writeSem chan struct{}

	statCopy *sql.Stmt

	// infos keeps the info of copies lately read, for readPageSQL.
	infos copyInfos

	// readers run the page reads, at most maxConns of them, each on a
	// connection of its own opened with busyTimeout.
	readers     readers
	maxConns    int
	busyTimeout time.Duration

	// chunks keeps the last few decompressed chunks, for paging forward.
	chunks chunkcodec.Cache

	// limits are the quotas SaveCopy enforces (SetLimits).
	limits store.Limits

	// reads records which copies were read, and when, until the next
	// write transaction (a save, housekeeping, Close) stores it: marking
	// every page read in the file would make each read a write.
	reads readlog.Log

	// fails keeps the latest failed save until it is written down.
	fails failures
}

var _ store.Store = (*DB)(nil)

// Open opens the database at path, creating the file (mode 0600) and its
// directory (mode 0700) when missing and bringing its schema up to date.
func Open(path string, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.BusyTimeout <= 0 {
		o.BusyTimeout = DefaultBusyTimeout
	}
	if o.MaxOpenConns <= 0 {
		o.MaxOpenConns = DefaultMaxOpenConns
	}
	if path == "" {
		return nil, errors.New("sqlite: open: empty database path; give the path of a database file")
	}
	if i := strings.IndexByte(path, 0); i >= 0 {
		return nil, fmt.Errorf("sqlite: open: the path %q holds a NUL byte at byte %d, which no file name can; give the path of a database file without it", path, i)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := checkPath(abs, o.ReadOnly); err != nil {
		return nil, err
	}

	d, err := open(abs, o, false)
	if err != nil && o.ReadOnly && cannotShare(err) && !walHasFrames(abs) {
		// A read-only directory or file system, where SQLite can create
		// neither the write-ahead log nor its shared index (PATH-wal,
		// PATH-shm), and no log holds commits the file lacks: then the
		// file is the whole database, read as it is (immutable=1).
		if d2, err2 := open(abs, o, true); err2 == nil {
			return d2, nil
		}
	}
	return d, err
}

// open opens the database at abs, read as an immutable file (SQLite's
// immutable=1: no locks, no log) when immutable.
func open(abs string, o Options, immutable bool) (*DB, error) {
	conn, err := sqlite.NewConnector(dsn(abs, o, immutable))
	if err != nil {
		return nil, &Error{Op: "open", Path: abs, Err: err}
	}
	if o.LeaveLog && !o.ReadOnly {
		conn = leaveLogConnector{conn}
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(o.MaxOpenConns)
	db.SetMaxIdleConns(o.MaxOpenConns)
	db.SetConnMaxIdleTime(5 * time.Minute)

	d := &DB{path: abs, readOnly: o.ReadOnly, immutable: immutable, leaveLog: o.LeaveLog && !o.ReadOnly, raw: o.RawChunks, db: db, writeSem: make(chan struct{}, 1),
		limits: store.DefaultLimits(), maxConns: o.MaxOpenConns, busyTimeout: o.BusyTimeout, readers: readers{stop: make(chan struct{})}}
	if err := d.init(o.BusyTimeout); err != nil {
		db.Close()
		return nil, explainOpen(wrap("open", abs, err), abs, o.ReadOnly)
	}
	return d, nil
}

// cannotShare reports whether a read-only open failed because SQLite could
// not open or create the write-ahead log's files beside the database
// (SQLITE_CANTOPEN, SQLITE_READONLY_CANTINIT and the like).
func cannotShare(err error) bool {
	var se sqliteError
	return errors.Is(err, ErrReadOnly) || (errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CANTOPEN)
}

// walHasFrames reports whether the write-ahead log beside the database at
// abs may hold commits not yet copied into the file: it exists and is not
// empty (or cannot be looked at).
func walHasFrames(abs string) bool {
	fi, err := os.Stat(abs + "-wal")
	return !errors.Is(err, fs.ErrNotExist) && (err != nil || fi.Size() > 0)
}

// explainOpen says why a read-write Open that SQLite could not open, or
// found read-only, failed when the cause is the directory: SQLite creates
// the write-ahead log and its shared memory (PATH-wal, PATH-shm) beside
// the file, so a directory it cannot write (a read-only file system, its
// permissions) fails the open of a file that exists and can be read, with
// only "unable to open database file". A file created and removed in the
// directory finds out, and the system's reason is given instead.
func explainOpen(err error, abs string, readOnly bool) error {
	var e *Error
	if readOnly || !errors.As(err, &e) {
		return err
	}
	var se sqliteError
	if !errors.Is(err, ErrReadOnly) && !(errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_CANTOPEN) {
		return err
	}
	dir := filepath.Dir(abs)
	f, perr := os.CreateTemp(dir, ".scrollback-probe-*")
	if perr == nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	cause := errors.Unwrap(e) // SQLite's own error, without wrap's gloss
	if errors.As(err, &se) {
		cause = se
	}
	why := perr
	var pe *fs.PathError
	if errors.As(perr, &pe) {
		why = pe.Err // "read-only file system", "permission denied"
	}
	return &Error{Op: e.Op, Path: abs,
		Err:  &classified{Kind: ErrReadOnly, Cause: fmt.Errorf("cannot write its directory %s (%v), where SQLite keeps the -wal and -shm files beside the database: %w", dir, why, cause)},
		Hint: "make the directory and the file writable, or point --db (or SCROLLBACK_DB) at a database in a writable directory"}
}

// checkPath rejects paths that cannot be a database file, with a message
// saying why, and creates the parent directory of a new read-write database.
func checkPath(abs string, readOnly bool) error {
	fi, err := os.Stat(abs)
	switch {
	case err == nil && fi.IsDir():
		return &Error{Op: "open", Path: abs, Err: errors.New("path is a directory"), Hint: "give the path of a database file, e.g. " + filepath.Join(abs, "scrollback.db")}
	case err == nil && !fi.Mode().IsRegular():
		return &Error{Op: "open", Path: abs, Err: fmt.Errorf("not a regular file (%s)", fi.Mode().Type()), Hint: "give the path of a database file"}
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
		return &Error{Op: "open", Path: abs, Err: err}
	case readOnly:
		return &Error{Op: "open", Path: abs, Err: errors.New("database does not exist"), Hint: "a read-only open needs an existing database"}
	}
	// The directory is made when missing, parents included. When it
	// cannot be, the message names it and says why: which part of the
	// path is a file, or the system's reason. (A part that is a file
	// failed with "stat PATH: not a directory", naming neither.)
	dir := filepath.Dir(abs)
	const dirHint = "point --db (or SCROLLBACK_DB) at a database in a directory that exists or can be created"
	if file := fileAncestor(dir); file != "" {
		return &Error{Op: "open", Path: abs, Err: fmt.Errorf("cannot create the directory %s: %s is a file, not a directory", dir, file), Hint: dirHint}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // "permission denied", "read-only file system"
		}
		return &Error{Op: "open", Path: abs, Err: fmt.Errorf("cannot create the directory %s: %w", dir, err), Hint: dirHint}
	}
	// The copies are command output, secrets included: the file is made
	// readable by its owner only (SQLite would make it 0644, less the
	// umask), and SQLite gives its -wal and -shm files the same mode. An
	// empty file is an empty database. A file made meanwhile by another
	// process is left as it is; when this one cannot be made, SQLite's
	// own open says why (a read-only file system, say, with its hint).
	if f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		f.Close()
	}
	return nil
}

// fileAncestor returns dir, or the nearest of its parents that exists,
// when that is not a directory (a file, say); else "".
func fileAncestor(dir string) string {
	for {
		fi, err := os.Stat(dir)
		if err == nil {
			if fi.IsDir() {
				return ""
			}
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// mmapSize is how much of the file each connection reads through a
// memory map (PRAGMA mmap_size) rather than read(2) into its page cache.
// A page read touches a few pages of a copy that may be anywhere in the
// file; with a server's readers spread over many copies, each
// connection's page cache (2 MB) mostly misses, and every miss was a
// system call, a page allocated and 4 KiB copied: a quarter of a random
// page's read. Mapped, the pages are the operating system's own cache,
// shared by every connection. SQLite caps it (at 2 GiB less 64 KiB); pages
// past it are read as before. Only on 64-bit systems, where address space
// is plenty. SQLite never writes through the map.
var mmapSize int64 = 1 << 30 * int64(strconv.IntSize/64)

// dsn builds the driver's connection string. The pragmas are part of it so
// that every pooled connection gets them, not only the first.
func dsn(abs string, o Options, immutable bool) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(o.BusyTimeout.Milliseconds(), 10)+")")
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(wal)")
	q.Add("_pragma", "synchronous(normal)")
	// Truncate the WAL back to 4 MiB once checkpointed, rather than keeping
	// it at its high-water mark after a big save.
	q.Add("_pragma", "journal_size_limit(4194304)")
	if mmapSize > 0 {
		q.Add("_pragma", "mmap_size("+strconv.FormatInt(mmapSize, 10)+")")
	}
	if o.PageCacheKiB > 0 {
		q.Add("_pragma", "cache_size(-"+strconv.Itoa(o.PageCacheKiB)+")")
	}
	if o.LeaveLog {
		q.Add("_pragma", "wal_autocheckpoint("+strconv.Itoa(LeaveLogPages)+")")
	}
	// Writers take the write lock when they begin, so two writers never
	// deadlock upgrading read locks; they queue on busy_timeout.
	q.Set("_txlock", "immediate")
	if o.ReadOnly {
		q.Set("mode", "ro")
	}
	if immutable {
		q.Set("immutable", "1")
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}
	return u.String()
}

func (d *DB) init(busyTimeout time.Duration) error {
	ctx := context.Background()
	err := waitBusy(busyTimeout, func() error {
		if d.readOnly {
			return checkSchema(ctx, d.db)
		}
		// Before anything is written: a database this program cannot use
		// is left as it was.
		if _, err := schemaVersion(ctx, d.db); err != nil {
			return err
		}
		if err := incrementalVacuum(ctx, d.db); err != nil {
			return err
		}
		if err := migrate(ctx, d.db); err != nil {
			return err
		}
		return deleteAbandoned(ctx, d.db)
	})
	if err != nil {
		return err
	}
	d.statCopy, err = d.db.Prepare(`SELECT ` + copyCols + ` FROM copies WHERE session = ? AND id = ? AND NOT pending`)
	return err
}

// waitBusy runs fn, and runs it again while it fails with SQLITE_BUSY, for
// up to timeout. Opening a new database needs it: the first connection
// switches the file to WAL mode, and SQLite takes the write lock for that
// switch by upgrading a read lock, which does not call the busy handler, so
// a process opening the file while another is creating it gets "database is
// locked" at once instead of waiting busy_timeout. Once the file is in WAL
// mode no connection switches it again, and every later lock waits on the
// busy handler as usual. fn must be safe to run again after a failure.
func waitBusy(timeout time.Duration, fn func() error) error {
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		err := fn()
		if err == nil || !isBusy(err) || time.Now().Add(pause).After(deadline) {
			return err
		}
		time.Sleep(pause)
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// Path returns the absolute path of the database file.
func (d *DB) Path() string { return d.path }

// Close writes down the reads not yet recorded (see SetLimits) and closes
// the database.
func (d *DB) Close() error {
	d.reads.Wait()
	if !d.readOnly && d.reads.Pending() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		// Best effort: losing a read time only makes that copy a little
		// more likely to be evicted.
		d.write(ctx, "record reads", func(tx *sql.Tx) error { return d.flushReads(ctx, tx) })
		cancel()
	}
	// A failed save that could not be written down when it failed: one
	// more try, so that the stats of later processes know of it; a short
	// one when it failed for a lock that may still be held, so that
	// `scrollback run` does not wait for it long after its result.
	wait := 5 * time.Second
	d.fails.mu.Lock()
	if d.fails.busy {
		wait = time.Second
	}
	d.fails.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	d.writeFailure(ctx)
	cancel()
	d.readers.close()
	if d.leaveLog {
		d.boundLog()
	}
	if d.statCopy != nil {
		d.statCopy.Close()
	}
	return wrap("close", d.path, d.db.Close())
}

// boundLog checkpoints and truncates the write-ahead log that Close is to
// leave (Options.LeaveLog) when it has grown past LeaveLogPages pages.
// SQLite's automatic checkpoint copies a log that size into the file, but
// only the next write of the same process starts it over: the next process
// to open the file rebuilds its index of the log and sees none of it
// copied, and every save that is not a BeginCopy's would append to it.
func (d *DB) boundLog() {
	fi, err := os.Stat(d.path + "-wal")
	if err != nil || fi.Size() <= LeaveLogPages*4096 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	select {
	case d.writeSem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-d.writeSem }()
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	d.checkpoint(ctx, conn) // best effort: a later one does it otherwise
}

// testHookWrite, when set (by tests), is called with the op of each write
// transaction before it starts.
var testHookWrite atomic.Pointer[func(op string)]

// write runs fn in a BEGIN IMMEDIATE transaction and commits it. Errors from
// fn are returned as they are; database errors are wrapped for op.
func (d *DB) write(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	if hook := testHookWrite.Load(); hook != nil {
		(*hook)(op)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	select {
	case d.writeSem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("sqlite: %s: %w", op, ctx.Err())
	}
	defer func() { <-d.writeSem }()
	err := d.writeTx(ctx, fn)
	var ie *inputError
	switch {
	case err == nil, isLookup(err):
		return err
	case errors.As(err, &ie):
		return fmt.Errorf("sqlite: %s: %w", op, err)
	case ctx.Err() != nil:
		// database/sql rolls back a transaction whose context ends, and
		// the statements after it report sql.ErrTxDone; say why instead.
		return fmt.Errorf("sqlite: %s: %w", op, ctx.Err())
	}
	return wrap(op, d.path, err)
}

func (d *DB) writeTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// inputError marks a failure of the reader handed to SaveCopy, which is
// reported as such rather than as a database error.
type inputError struct{ err error }

func (e *inputError) Error() string { return "read input: " + e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// isLookup reports whether err is one of the store's lookup errors, which
// are returned as they are.
func isLookup(err error) bool {
	return errors.Is(err, store.ErrSessionNotFound) || errors.Is(err, store.ErrCopyNotFound) ||
		errors.Is(err, store.ErrOffset) || errors.Is(err, store.ErrEvicted)
}

// readErr wraps an error from a read-only query.
func (d *DB) readErr(op string, err error) error {
	if err == nil || isLookup(err) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("sqlite: %s: %w", op, err)
	}
	return wrap(op, d.path, err)
}

func now() int64 { return time.Now().UnixNano() }

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// CreateSession makes a new, empty session owned by owner.
func (d *DB) CreateSession(ctx context.Context, owner string) (store.Session, error) {
	var s store.Session
	err := d.write(ctx, "create session", func(tx *sql.Tx) (err error) {
		s, err = insertSession(ctx, tx, owner, "")
		return err
	})
	return s, err
}

func insertSession(ctx context.Context, tx *sql.Tx, owner, parent string) (store.Session, error) {
	s := store.Session{ID: store.NewID(store.SessionPrefix), Owner: owner, Parent: parent}
	at := now()
	s.CreatedAt = fromNanos(at)
	s.LastUsedAt = s.CreatedAt
	_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, owner, parent, created_at, last_used_at) VALUES (?, ?, ?, ?, ?)`,
		s.ID, owner, parent, at, at)
	return s, err
}

// DefaultSession returns owner's default session, creating it on first use.
// The check and the creation share one write transaction, so concurrent first
// uses, in this process or another, agree on one session.
func (d *DB) DefaultSession(ctx context.Context, owner string) (store.Session, error) {
	// Fast path: it exists already.
	s, err := d.defaultSession(ctx, d.db, owner)
	if err == nil || !errors.Is(err, store.ErrSessionNotFound) {
		return s, d.readErr("default session", err)
	}
	err = d.write(ctx, "default session", func(tx *sql.Tx) error {
		s, err = d.defaultSession(ctx, tx, owner)
		if !errors.Is(err, store.ErrSessionNotFound) {
			return err
		}
		if s, err = insertSession(ctx, tx, owner, ""); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO default_sessions (owner, session) VALUES (?, ?)`, owner, s.ID)
		return err
	})
	return s, err
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (d *DB) defaultSession(ctx context.Context, q querier, owner string) (store.Session, error) {
	var id string
	err := q.QueryRowContext(ctx, `SELECT session FROM default_sessions WHERE owner = ?`, owner).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return store.Session{}, store.ErrSessionNotFound
	}
	if err != nil {
		return store.Session{}, err
	}
	return getSession(ctx, q, owner, id)
}

const sessionQuery = `
	SELECT s.id, s.owner, s.parent, s.created_at, count(c.pk), coalesce(sum(c.total_bytes), 0), s.last_used_at
	FROM sessions s LEFT JOIN copies c ON c.session = s.id AND NOT c.pending`

func scanSession(sc interface{ Scan(...any) error }) (store.Session, error) {
	var s store.Session
	var at, used int64
	err := sc.Scan(&s.ID, &s.Owner, &s.Parent, &at, &s.Copies, &s.Bytes, &used)
	s.CreatedAt, s.LastUsedAt = fromNanos(at), fromNanos(used)
	return s, err
}

func getSession(ctx context.Context, q querier, owner, id string) (store.Session, error) {
	if !store.ValidID(store.SessionPrefix, id) {
		return store.Session{}, store.ErrSessionNotFound
	}
	s, err := scanSession(q.QueryRowContext(ctx, sessionQuery+` WHERE s.id = ? AND s.owner = ? GROUP BY s.id`, id, owner))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Session{}, store.ErrSessionNotFound
	}
	return s, err
}

// GetSession returns the session, or store.ErrSessionNotFound when there is
// no session with that id owned by owner.
func (d *DB) GetSession(ctx context.Context, owner, id string) (store.Session, error) {
	s, err := getSession(ctx, d.db, owner, id)
	return s, d.readErr("get session", err)
}

// ListSessions returns owner's sessions, oldest first, with their copy
// counts and byte totals.
func (d *DB) ListSessions(ctx context.Context, owner string) ([]store.Session, error) {
	rows, err := d.db.QueryContext(ctx, sessionQuery+` WHERE s.owner = ? GROUP BY s.id ORDER BY s.created_at, s.rowid`, owner)
	if err != nil {
		return nil, d.readErr("list sessions", err)
	}
	defer rows.Close()
	var out []store.Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, d.readErr("list sessions", err)
		}
		out = append(out, s)
	}
	return out, d.readErr("list sessions", rows.Err())
}

// ForkSession makes a new, empty session owned by owner whose Parent is id.
func (d *DB) ForkSession(ctx context.Context, owner, id string) (store.Session, error) {
	if !store.ValidID(store.SessionPrefix, id) {
		return store.Session{}, store.ErrSessionNotFound
	}
	var s store.Session
	err := d.write(ctx, "fork session", func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = ? AND owner = ?`, id, owner).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return store.ErrSessionNotFound
		}
		if err != nil {
			return err
		}
		s, err = insertSession(ctx, tx, owner, id)
		return err
	})
	return s, err
}

// DeleteSession deletes the session and its copies, then returns the freed
// pages to the file system (incremental vacuum), so the file shrinks.
func (d *DB) DeleteSession(ctx context.Context, owner, id string) error {
	if !store.ValidID(store.SessionPrefix, id) {
		return store.ErrSessionNotFound
	}
	err := d.write(ctx, "delete session", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE id = ? AND owner = ?`, id, owner)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return store.ErrSessionNotFound
		}
		_, err = tx.ExecContext(ctx, `PRAGMA incremental_vacuum`)
		return err
	})
	if err != nil {
		return err
	}
	// The vacuum truncates the file once its pages are checkpointed out of
	// the WAL. A passive checkpoint never waits for readers; if some are
	// active, the next automatic checkpoint finishes the job.
	d.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
	return nil
}

const copyCols = `id, session, tool, source, total_bytes, lines, complete, omitted_bytes, omitted_lines, created_at`

func scanCopy(sc interface{ Scan(...any) error }) (store.CopyInfo, error) {
	var c store.CopyInfo
	var at int64
	err := sc.Scan(&c.ID, &c.Session, &c.Tool, &c.Source, &c.TotalBytes, &c.Lines, &c.Complete, &c.OmittedBytes, &c.OmittedLines, &at)
	c.CreatedAt = fromNanos(at)
	return c, err
}

// SaveCopy stores everything r yields as a new copy in session. It reads r
// one chunk at a time into a single reused buffer, so memory does not grow
// with the copy's size, and writes the chunks (compressed where that saves
// space) in one write transaction, so the copy is visible only once whole.
// In the same transaction it evicts what the limits require (see
// SetLimits): an eviction and the save that caused it commit together.
//
// The write lock is held while r is read: other writers (in this process or
// another) wait for the save to finish. Hand SaveCopy output that has already
// been captured (a file, a buffer), not a pipe from a process still running,
// or a slow producer can make them time out with ErrBusy.
func (d *DB) SaveCopy(ctx context.Context, session string, meta store.CopyMeta, r io.Reader) (store.CopyInfo, error) {
	if !store.ValidID(store.SessionPrefix, session) {
		return store.CopyInfo{}, store.ErrSessionNotFound
	}
	info := store.CopyInfo{
		ID:           store.NewID(store.CopyPrefix),
		Session:      session,
		Tool:         meta.Tool,
		Source:       meta.Source,
		Complete:     meta.Complete,
		OmittedBytes: meta.OmittedBytes,
		OmittedLines: meta.OmittedLines,
	}
	err := d.write(ctx, "save copy", func(tx *sql.Tx) error {
		pk, err := insertCopy(ctx, tx, &info, false)
		if err != nil {
			return err
		}
		w := &chunkWriter{pk: pk, raw: d.raw, room: room{dir: filepath.Dir(d.path)}}
		if err := w.copyFrom(ctx, tx, r); err != nil {
			return err
		}
		return d.finish(ctx, tx, w, &info)
	})
	if err != nil {
		d.saveFailed(ctx, session, 0, err)
		return store.CopyInfo{}, err
	}
	return info, nil
}

// insertCopy adds the copy's row, empty (and pending, if so), and returns
// its key; it returns store.ErrSessionNotFound when the session does not
// exist.
func insertCopy(ctx context.Context, tx *sql.Tx, info *store.CopyInfo, pending bool) (int64, error) {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM sessions WHERE id = ?`, info.Session).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, store.ErrSessionNotFound
	}
	if err != nil {
		return 0, err
	}
	at := now()
	info.CreatedAt = fromNanos(at)
	res, err := tx.ExecContext(ctx, `INSERT INTO copies (`+copyCols+`, stored_bytes, last_read_at, pending) VALUES (?, ?, ?, ?, 0, 0, ?, ?, ?, ?, 0, ?, ?)`,
		info.ID, info.Session, info.Tool, info.Source, info.Complete, info.OmittedBytes, info.OmittedLines, at, at, pending)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// chunkWriter writes a copy's chunks, compressed where that saves space,
// and counts what it wrote; a pending copy keeps one across its appends.
type chunkWriter struct {
	pk    int64
	raw   bool // Options.RawChunks
	room  room // what the current transaction's chunks take of the file system
	tally chunkcodec.Tally
	zbuf  []byte
}

// write stores chunk (at most store.ChunkSize bytes) as the next one.
func (w *chunkWriter) write(ctx context.Context, insert *sql.Stmt, chunk []byte) error {
	if len(chunk) == 0 {
		return nil
	}
	data, codec := chunk, chunkcodec.Raw
	if !w.raw {
		if w.zbuf == nil {
			w.zbuf = make([]byte, 0, chunkcodec.DstSize(store.ChunkSize))
		}
		data, codec = chunkcodec.Encode(w.zbuf, chunk)
	}
	if err := w.room.take(len(data)); err != nil {
		return err
	}
	if _, err := insert.ExecContext(ctx, w.pk, w.tally.Chunks, codec, data); err != nil {
		return err
	}
	w.tally.Add(chunk, len(data))
	return nil
}

func prepareInsert(ctx context.Context, tx *sql.Tx) (*sql.Stmt, error) {
	return tx.PrepareContext(ctx, `INSERT INTO chunks (copy, seq, codec, data) VALUES (?, ?, ?, ?)`)
}

// copyFrom streams r into chunks, one reused buffer at a time, so memory
// does not grow with the copy.
func (w *chunkWriter) copyFrom(ctx context.Context, tx *sql.Tx, r io.Reader) error {
	w.room.begin(w.tally.Stored)
	insert, err := prepareInsert(ctx, tx)
	if err != nil {
		return err
	}
	defer insert.Close()
	buf := make([]byte, store.ChunkSize)
	for {
		n, rerr := fill(r, buf)
		if rerr != nil && rerr != io.EOF {
			return &inputError{rerr}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := w.write(ctx, insert, buf[:n]); err != nil {
			return err
		}
		if rerr == io.EOF {
			return nil
		}
	}
}

// finish records the copy's totals and meta, makes it visible, marks its
// session used, writes down the reads noted so far and evicts what the
// limits require.
func (d *DB) finish(ctx context.Context, tx *sql.Tx, w *chunkWriter, info *store.CopyInfo) error {
	info.TotalBytes, info.Lines = w.tally.Total, w.tally.Lines()
	at := now()
	info.CreatedAt = fromNanos(at)
	if _, err := tx.ExecContext(ctx, `UPDATE copies SET total_bytes = ?, lines = ?, stored_bytes = ?, tool = ?, source = ?,
		complete = ?, omitted_bytes = ?, omitted_lines = ?, created_at = ?, last_read_at = ?, pending = 0 WHERE pk = ?`,
		info.TotalBytes, info.Lines, w.tally.Stored, info.Tool, info.Source, info.Complete, info.OmittedBytes, info.OmittedLines,
		at, at, w.pk); err != nil {
		return err
	}
	if err := setBackFuture(ctx, tx, at); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET last_used_at = max(last_used_at, ?) WHERE id = ?`, at, info.Session); err != nil {
		return err
	}
	if err := d.flushReads(ctx, tx); err != nil {
		return err
	}
	return d.evict(ctx, tx, info.Session, w.pk)
}

// fill reads from r until buf is full or r fails, like io.ReadFull, but
// reports r's errors as they are: only io.EOF ends the input, and an
// io.ErrUnexpectedEOF from r is a failure, not a short last chunk.
func fill(r io.Reader, buf []byte) (int, error) {
	n, empty := 0, 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
		if m > 0 {
			empty = 0
		} else if empty++; empty >= 100 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}

// StatCopy returns the copy's info, or store.ErrCopyNotFound.
func (d *DB) StatCopy(ctx context.Context, session, id string) (store.CopyInfo, error) {
	if !store.ValidID(store.SessionPrefix, session) || !store.ValidID(store.CopyPrefix, id) {
		return store.CopyInfo{}, store.ErrCopyNotFound
	}
	c, err := scanCopy(d.statCopy.QueryRowContext(ctx, session, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = d.missing(ctx, session, id)
	}
	return c, d.readErr("stat copy", err)
}

// CopySession returns the id of owner's session that holds copy id, or
// held it until it was evicted, in one query of the unique copy ids.
func (d *DB) CopySession(ctx context.Context, owner, id string) (string, error) {
	if !store.ValidID(store.CopyPrefix, id) {
		return "", store.ErrCopyNotFound
	}
	var session string
	err := d.db.QueryRowContext(ctx, `
		SELECT c.session FROM copies c JOIN sessions s ON s.id = c.session WHERE c.id = ? AND s.owner = ? AND NOT c.pending
		UNION ALL
		SELECT e.session FROM evicted e JOIN sessions s ON s.id = e.session WHERE e.id = ? AND s.owner = ?
		LIMIT 1`, id, owner, id, owner).Scan(&session)
	if errors.Is(err, sql.ErrNoRows) {
		return "", store.ErrCopyNotFound
	}
	return session, d.readErr("find copy", err)
}

// ReadCopyAt reads len(p) bytes of the copy from byte offset off, with
// io.ReaderAt semantics. One statement (one snapshot) looks the copy up and
// reads only the chunks covering the range, and only the wanted bytes of
// each.
func (d *DB) ReadCopyAt(ctx context.Context, session, id string, p []byte, off int64) (int, error) {
	_, n, err := d.StatReadCopyAt(ctx, session, id, p, off)
	return n, err
}

// StatReadCopyAt is StatCopy and ReadCopyAt in the one statement
// ReadCopyAt runs: the copy's info comes with every row of its chunks.
func (d *DB) StatReadCopyAt(ctx context.Context, session, id string, p []byte, off int64) (store.CopyInfo, int, error) {
	if !store.ValidID(store.SessionPrefix, session) || !store.ValidID(store.CopyPrefix, id) {
		return store.CopyInfo{}, 0, store.ErrCopyNotFound
	}
	// A page is a few indexed rows of a local file, read in microseconds:
	// it runs to its end once started, without watching ctx. A ctx
	// already done still ends it before it starts.
	if err := ctx.Err(); err != nil {
		return store.CopyInfo{}, 0, d.readErr("read copy", err)
	}
	info, n, err := d.readOnReader(session, id, p, off)
	if errors.Is(err, store.ErrCopyNotFound) {
		err = d.missing(ctx, session, id)
	}
	if err != nil && err != io.EOF {
		return info, n, d.readErr("read copy", err)
	}
	if n > 0 || err == io.EOF {
		d.markRead(session, id)
	}
	return info, n, err
}

// missing returns the error for a copy the session does not hold: an
// *store.EvictedError when it was evicted from this session, else
// store.ErrCopyNotFound.
func (d *DB) missing(ctx context.Context, session, id string) error {
	var at int64
	err := d.db.QueryRowContext(ctx, `SELECT at FROM evicted WHERE session = ? AND id = ?`, session, id).Scan(&at)
	switch {
	case err == nil:
		return &store.EvictedError{ID: id, At: fromNanos(at)}
	case errors.Is(err, sql.ErrNoRows):
		return store.ErrCopyNotFound
	}
	return err
}

// readCopyAt reads on conn, a reader's connection: readPageSQL when the
// copy's info is known, else readChunksSQL. The info is the zero value
// when the copy is not found, and set otherwise, whatever the error.
func (d *DB) readCopyAt(conn *readConn, session, id string, p []byte, off int64) (info store.CopyInfo, n int, err error) {
	const C = store.ChunkSize
	end := off + int64(len(p))
	if end < off { // overflow
		end = math.MaxInt64
	}
	first, last := max(off, 0)/C, max(end-1, 0)/C
	info, known := d.infos.get(session, id)
	stmt, col := conn.chunks, infoCols
	if known {
		stmt, col = conn.page, 0
	}
	defer func() {
		if rerr := conn.reset(stmt); rerr != nil && (err == nil || err == io.EOF) {
			info, n, err = store.CopyInfo{}, 0, rerr
		}
	}()
	if err := conn.start(stmt, session, id, first, last, off, end); err != nil {
		return store.CopyInfo{}, 0, err
	}
	found := false
	for {
		row, err := conn.step(stmt)
		if err != nil {
			return store.CopyInfo{}, 0, err
		}
		if !row {
			break
		}
		if !found && !known {
			info = store.CopyInfo{ID: id, Session: session,
				Tool: conn.textAt(stmt, 0), Source: conn.textAt(stmt, 1),
				TotalBytes: conn.int64At(stmt, 2), Lines: conn.int64At(stmt, 3),
				Complete: conn.int64At(stmt, 4) != 0, OmittedBytes: conn.int64At(stmt, 5),
				OmittedLines: conn.int64At(stmt, 6), CreatedAt: fromNanos(conn.int64At(stmt, 7))}
			d.infos.put(info)
		}
		found = true
		total := info.TotalBytes
		if off < 0 || off > total {
			return info, 0, fmt.Errorf("%w: offset %d, want 0 to %d (the copy's size)", store.ErrOffset, off, total)
		}
		if conn.nullAt(stmt, col) { // no chunk in range: off == total
			break
		}
		seq, codec := conn.int64At(stmt, col), conn.int64At(stmt, col+1)
		piece := conn.blobAt(stmt, col+2) // SQLite's memory: used before the next step
		if want := max(seq*C, off) - off; want != int64(n) {
			return info, n, fmt.Errorf("copy %s is damaged: chunk %d missing", id, (off+int64(n))/C)
		}
		if codec != chunkcodec.Raw {
			m, err := d.chunks.Read(p[n:], id, seq, int(codec), piece, max(off-seq*C, 0))
			if err != nil {
				return info, n, fmt.Errorf("copy %s is damaged: %w", id, err)
			}
			n += m
			continue
		}
		n += copy(p[n:], piece)
	}
	if !found {
		return store.CopyInfo{}, 0, store.ErrCopyNotFound
	}
	total := info.TotalBytes
	if off == total {
		return info, 0, io.EOF
	}
	if want := min(end, total) - off; int64(n) != want {
		return info, n, fmt.Errorf("copy %s is damaged: %d bytes at offset %d, want %d", id, n, off, want)
	}
	if n < len(p) {
		return info, n, io.EOF
	}
	return info, n, nil
}

// ListCopies returns the session's copies, oldest first; none for a session
// that does not exist.
func (d *DB) ListCopies(ctx context.Context, session string) ([]store.CopyInfo, error) {
	if !store.ValidID(store.SessionPrefix, session) {
		return nil, nil
	}
	rows, err := d.db.QueryContext(ctx, `SELECT `+copyCols+` FROM copies WHERE session = ? AND NOT pending ORDER BY pk`, session)
	if err != nil {
		return nil, d.readErr("list copies", err)
	}
	defer rows.Close()
	var out []store.CopyInfo
	for rows.Next() {
		c, err := scanCopy(rows)
		if err != nil {
			return nil, d.readErr("list copies", err)
		}
		out = append(out, c)
	}
	return out, d.readErr("list copies", rows.Err())
}
