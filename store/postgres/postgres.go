package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/internal/chunkcodec"
	"github.com/scrollback-dev/scrollback/store/internal/readlog"
)

// DB is a store.Store on a PostgreSQL database, shared safely by any number
// of goroutines and processes.
type DB struct {
	pool   *pgxpool.Pool
	server string // host:port/database, for messages

	// newID makes ids; tests replace it to know a copy's id before its save
	// returns.
	newID func(prefix string) string

	// chunks keeps the last few decompressed chunks, for paging forward.
	chunks chunkcodec.Cache

	// raw stores new chunks uncompressed, as sqlite.Options.RawChunks
	// does; the benchmarks measure compression against it.
	raw bool

	// limits are the quotas SaveCopy enforces (SetLimits).
	limits store.Limits

	// tx begins each write transaction: with lock_timeout set to
	// defaultLockTimeout, unless the URL sets one for the connections.
	tx pgx.TxOptions

	// reads records which copies were read, and when, until the next
	// write transaction (a save, DeleteIdle, Close) stores it, so that a
	// page read stays one read-only query.
	reads readlog.Log

	// vac vacuums the tables in the background after rows were deleted
	// (see SetVacuumErrorLog).
	vac vacuumer

	// fails keeps the latest failed save until it is written down.
	fails failures
}

var _ store.Store = (*DB)(nil)

// defaultConnectTimeout bounds each connection attempt when the URL sets no
// connect_timeout, so that an unreachable host fails in seconds, not minutes.
const defaultConnectTimeout = 10 * time.Second

// defaultLockTimeout is PostgreSQL's lock_timeout in the write
// transactions when the URL sets none: a statement that waits longer for a
// lock fails with store.ErrBusy, as a SQLite database locked past its busy
// timeout does. Without it a save could wait for hours: for an instance
// that lost its network in the middle of a save, whose locks the server
// keeps until TCP gives up on the connection, and the engine saves without
// the caller's cancellation (a result is saved whole or not at all).
var defaultLockTimeout = "10s" // a variable for the tests only

// Open connects to the database at url (postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?PARAMS],
// or any other form pgx accepts, including pool_max_conns and the other
// pool_* parameters, and any server setting: lock_timeout=30s replaces the
// default of 10 s, lock_timeout=0 waits for ever), checks that the server answers and applies the
// schema migrations this program knows. A server that cannot be reached
// gives an *Error whose cause matches ErrUnavailable and whose message
// names the server and what to check.
func Open(ctx context.Context, url string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, &Error{Op: "open", Err: err,
			Hint: "the URL should look like postgres://USER@HOST:PORT/DATABASE?sslmode=disable"}
	}
	if cfg.ConnConfig.ConnectTimeout == 0 && !strings.Contains(url, "connect_timeout") {
		cfg.ConnConfig.ConnectTimeout = defaultConnectTimeout
	}
	server := fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, classify("open", server, err)
	}
	db := &DB{pool: pool, server: server, newID: store.NewID,
		limits: store.DefaultLimits()}
	if _, ok := cfg.ConnConfig.RuntimeParams["lock_timeout"]; !ok {
		// Set in each write transaction, not as a startup parameter of
		// the connection, which PgBouncer refuses.
		db.tx.BeginQuery = "BEGIN; SET LOCAL lock_timeout = '" + defaultLockTimeout + "'"
	}
	db.vac.init(db.vacuum)
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, db.wrap("connect", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		e := db.wrap("migrate the schema", err)
		var pe *Error
		if errors.Is(err, ErrNewerSchema) && errors.As(e, &pe) {
			pe.Hint = "upgrade scrollback, or point --db at another database"
		}
		return nil, e
	}
	if err := deleteAbandoned(ctx, pool); err != nil {
		pool.Close()
		return nil, db.wrap("delete abandoned copies", err)
	}
	blocked, err := vacuumBlocked(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, db.wrap("check who may VACUUM the chunks", err)
	}
	db.vac.block(blocked)
	return db, nil
}

// exec runs one writing statement as its own transaction, begun as db.tx
// begins one: with the lock_timeout that a statement of the pool alone
// would not have.
func (db *DB) exec(ctx context.Context, sql string, args ...any) (tag pgconn.CommandTag, err error) {
	if db.tx.BeginQuery == "" {
		return db.pool.Exec(ctx, sql, args...)
	}
	err = pgx.BeginTxFunc(ctx, db.pool, db.tx, func(tx pgx.Tx) error {
		tag, err = tx.Exec(ctx, sql, args...)
		return err
	})
	return tag, err
}

// quick runs fn, one small writing statement of bookkeeping (a last
// read, a last use), under a deadline of the default lock_timeout instead
// of in a transaction of its own: the same bound on waiting for a lock
// held elsewhere without two more round trips to the server for each
// save. With the URL's lock_timeout the statement has it already.
func (db *DB) quick(ctx context.Context, fn func(context.Context) error) error {
	if db.tx.BeginQuery == "" {
		return fn(ctx)
	}
	d, err := time.ParseDuration(defaultLockTimeout)
	if err != nil {
		return fn(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return fn(ctx)
}

// Close writes down the reads not yet recorded (see SetLimits) and closes
// every connection in the pool. Calls still running are waited for; a
// background VACUUM under way is cancelled (the next one, or autovacuum,
// does its work).
func (db *DB) Close() error {
	// A failed save that could not be written down when it failed: one
	// more try, so that the stats of later processes know of it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	db.writeFailure(ctx)
	cancel()
	db.reads.Wait()
	db.vac.close()
	if db.reads.Pending() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		// Best effort: a lost read time only makes that copy a little more
		// likely to be evicted.
		db.flushReads(ctx)
		cancel()
	}
	db.pool.Close()
	return nil
}

// retry runs fn and, for idempotent calls, runs it once more when it failed
// because its connection broke: after a server restart the pool may still
// hold connections to the old server, and a fresh one will do.
func (db *DB) retry(ctx context.Context, fn func() error) error {
	err := fn()
	if err != nil && retryable(ctx, err) {
		// A broken connection usually means they all are (the server
		// restarted, the network went away): drop the idle ones now
		// rather than meet them one failed call at a time.
		db.pool.Reset()
		err = fn()
	}
	return err
}

const sessionQuery = `
SELECT s.id, s.owner, s.parent, s.created_at, count(c.pk), coalesce(sum(c.total_bytes), 0)::bigint, s.last_used_at
FROM sessions s LEFT JOIN copies c ON c.session = s.id AND NOT c.pending
WHERE s.owner = $1 AND ($2 = '' OR s.id = $2)
GROUP BY s.id
ORDER BY s.created_at, s.id`

func scanSession(row pgx.Row) (store.Session, error) {
	var s store.Session
	var owner []byte
	var copies int64
	err := row.Scan(&s.ID, &owner, &s.Parent, &s.CreatedAt, &copies, &s.Bytes, &s.LastUsedAt)
	s.Owner, s.Copies = string(owner), int(copies)
	return s, err
}

// CreateSession makes a new, empty session owned by owner.
func (db *DB) CreateSession(ctx context.Context, owner string) (store.Session, error) {
	s := store.Session{ID: db.newID(store.SessionPrefix), Owner: owner}
	err := db.pool.QueryRow(ctx, "INSERT INTO sessions (id, owner) VALUES ($1, $2) RETURNING created_at, last_used_at",
		s.ID, []byte(owner)).Scan(&s.CreatedAt, &s.LastUsedAt)
	return s, db.wrap("create session", err)
}

// DefaultSession returns owner's default session, creating it on first use.
// Concurrent first uses, in any number of processes, agree on one session:
// each inserts its candidate with INSERT ... ON CONFLICT DO NOTHING, which
// waits for a competing insert to commit; the losers discard theirs and
// read the winner's.
func (db *DB) DefaultSession(ctx context.Context, owner string) (store.Session, error) {
	const get = `
SELECT s.id, s.owner, s.parent, s.created_at, count(c.pk), coalesce(sum(c.total_bytes), 0)::bigint, s.last_used_at
FROM default_sessions d JOIN sessions s ON s.id = d.session LEFT JOIN copies c ON c.session = s.id AND NOT c.pending
WHERE d.owner = $1
GROUP BY s.id`
	for range 10 {
		var s store.Session
		err := db.retry(ctx, func() (err error) {
			s, err = scanSession(db.pool.QueryRow(ctx, get, []byte(owner)))
			return err
		})
		if err == nil {
			return s, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return store.Session{}, db.wrap("default session", err)
		}
		won := false
		err = pgx.BeginTxFunc(ctx, db.pool, db.tx, func(tx pgx.Tx) error {
			id := db.newID(store.SessionPrefix)
			if _, err := tx.Exec(ctx, "INSERT INTO sessions (id, owner) VALUES ($1, $2)", id, []byte(owner)); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, "INSERT INTO default_sessions (owner, session) VALUES ($1, $2) ON CONFLICT (owner) DO NOTHING", []byte(owner), id)
			if err != nil {
				return err
			}
			if won = tag.RowsAffected() == 1; !won {
				return errLost // roll back the candidate session
			}
			return nil
		})
		if err != nil && !errors.Is(err, errLost) {
			return store.Session{}, db.wrap("default session", err)
		}
		// Won or lost, the default now exists (unless it was deleted
		// meanwhile, when the loop makes another): read it back.
	}
	return store.Session{}, &Error{Op: "default session", Server: db.server,
		Err: errors.New("the default session kept disappearing while being made"), Hint: "retry"}
}

var errLost = errors.New("postgres: lost the race to make the default session")

// GetSession returns the session, or store.ErrSessionNotFound.
func (db *DB) GetSession(ctx context.Context, owner, id string) (store.Session, error) {
	if !store.ValidID(store.SessionPrefix, id) {
		return store.Session{}, store.ErrSessionNotFound
	}
	var s store.Session
	err := db.retry(ctx, func() (err error) {
		s, err = scanSession(db.pool.QueryRow(ctx, sessionQuery, []byte(owner), id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Session{}, store.ErrSessionNotFound
	}
	return s, db.wrap("get session", err)
}

// ListSessions returns owner's sessions, oldest first, with their copy
// counts and byte totals.
func (db *DB) ListSessions(ctx context.Context, owner string) ([]store.Session, error) {
	var list []store.Session
	err := db.retry(ctx, func() error {
		rows, err := db.pool.Query(ctx, sessionQuery, []byte(owner), "")
		if err != nil {
			return err
		}
		list, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Session, error) { return scanSession(r) })
		return err
	})
	return list, db.wrap("list sessions", err)
}

// ForkSession makes a new, empty session owned by owner whose Parent is id,
// or returns store.ErrSessionNotFound.
func (db *DB) ForkSession(ctx context.Context, owner, id string) (store.Session, error) {
	if !store.ValidID(store.SessionPrefix, id) {
		return store.Session{}, store.ErrSessionNotFound
	}
	s := store.Session{ID: db.newID(store.SessionPrefix), Owner: owner, Parent: id}
	err := db.pool.QueryRow(ctx, `
INSERT INTO sessions (id, owner, parent)
SELECT $1, owner, id FROM sessions WHERE id = $2 AND owner = $3
RETURNING created_at, last_used_at`, s.ID, id, []byte(owner)).Scan(&s.CreatedAt, &s.LastUsedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Session{}, store.ErrSessionNotFound
	}
	return s, db.wrap("fork session", err)
}

// DeleteSession deletes the session with its copies and their chunks (ON
// DELETE CASCADE), or returns store.ErrSessionNotFound. The rows' space is
// made reusable by a VACUUM in the background (see SetVacuumErrorLog).
func (db *DB) DeleteSession(ctx context.Context, owner, id string) error {
	if !store.ValidID(store.SessionPrefix, id) {
		return store.ErrSessionNotFound
	}
	tag, err := db.exec(ctx, "DELETE FROM sessions WHERE id = $1 AND owner = $2", id, []byte(owner))
	if err != nil {
		return db.wrap("delete session", err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrSessionNotFound
	}
	db.vac.soon()
	return nil
}

// SaveCopy streams r into a new copy in session, in one transaction: the
// copy row first (which fails when the session does not exist), then the
// chunks through COPY FROM, one store.ChunkSize buffer at a time and each
// compressed where that saves space, then the totals, the evictions the
// limits require (see SetLimits), then COMMIT. Nothing is visible before
// the commit; if the process dies midway, the server rolls the transaction
// back when the connection drops.
func (db *DB) SaveCopy(ctx context.Context, session string, meta store.CopyMeta, r io.Reader) (store.CopyInfo, error) {
	if !store.ValidID(store.SessionPrefix, session) {
		return store.CopyInfo{}, store.ErrSessionNotFound
	}
	if err := ctx.Err(); err != nil {
		return store.CopyInfo{}, db.wrap("save copy", err)
	}
	info := store.CopyInfo{
		ID: db.newID(store.CopyPrefix), Session: session, Tool: meta.Tool, Source: meta.Source,
		Complete: meta.Complete, OmittedBytes: meta.OmittedBytes, OmittedLines: meta.OmittedLines,
	}
	// The reads noted so far go first, so that the evictions see them; in
	// statements of their own, before the transaction holds anything
	// (see flushReads).
	db.flushReads(ctx)
	db.vac.waitBriefly(ctx)
	info, err := db.saveCopy(ctx, info, r)
	if err != nil {
		db.saveFailed(ctx, session, 0, err)
		return store.CopyInfo{}, err
	}
	return info, nil
}

// saveCopy is SaveCopy's transaction.
func (db *DB) saveCopy(ctx context.Context, info store.CopyInfo, r io.Reader) (store.CopyInfo, error) {
	tx, err := db.pool.BeginTx(ctx, db.tx)
	if err != nil {
		return store.CopyInfo{}, db.wrap("save copy", err)
	}
	// Rolled back before saveFailed runs, so that a VACUUM it starts sees
	// the rows this transaction wrote as dead.
	defer tx.Rollback(context.WithoutCancel(ctx))

	pk, err := insertCopy(ctx, tx, &info, false)
	if err != nil {
		return store.CopyInfo{}, db.wrap("save copy", err)
	}
	w := &chunkWriter{pk: pk, raw: db.raw}
	if err := db.finishTx(ctx, tx, w, r, &info); err != nil {
		return store.CopyInfo{}, err
	}
	return info, nil
}

// finishTx streams the rest of the copy from r, records its totals and
// meta, makes it visible, writes down the reads noted so far, evicts what
// the limits require, and commits.
func (db *DB) finishTx(ctx context.Context, tx pgx.Tx, w *chunkWriter, r io.Reader, info *store.CopyInfo) error {
	err := w.copyFrom(ctx, tx, r)
	var ie *inputError
	if errors.As(err, &ie) {
		return fmt.Errorf("postgres: save copy: %w", err)
	}
	if err != nil {
		return db.wrap("save copy", err)
	}
	if err := finishCopy(ctx, tx, w, info); err != nil {
		return db.wrap("save copy", err)
	}
	evicted, err := db.evict(ctx, tx, info.Session, w.pk)
	if err != nil {
		return db.wrap("save copy", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return db.wrap("save copy", err)
	}
	if evicted > 0 {
		db.vac.soon() // the evicted copies' space, for the next saves
	}
	// The session's last use, after the commit: a save holds no session
	// row, so concurrent saves and reads cannot deadlock over them. A
	// failure here only leaves the last use a save behind.
	db.markUsed(ctx, []string{info.Session}, []time.Time{info.CreatedAt})
	return nil
}

// insertCopy adds the copy's row, empty (and pending, if so), and returns
// its key, or store.ErrSessionNotFound when the session does not exist.
func insertCopy(ctx context.Context, tx pgx.Tx, info *store.CopyInfo, pending bool) (int64, error) {
	var pk int64
	err := tx.QueryRow(ctx, `
INSERT INTO copies (session, id, tool, source, total_bytes, lines, complete, omitted_bytes, omitted_lines, pending)
VALUES ($1, $2, $3, $4, 0, 0, $5, $6, $7, $8)
RETURNING pk, created_at`,
		info.Session, info.ID, []byte(info.Tool), []byte(info.Source), info.Complete, info.OmittedBytes, info.OmittedLines, pending,
	).Scan(&pk, &info.CreatedAt)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "23503" { // foreign_key_violation: no such session
		return 0, store.ErrSessionNotFound
	}
	return pk, err
}

// chunkWriter writes a copy's chunks with COPY FROM and counts what it
// wrote; a pending copy keeps one across its appends.
type chunkWriter struct {
	pk    int64
	raw   bool // DB.raw
	tally chunkcodec.Tally
}

// copyFrom streams r into the copy's next chunks, one reused buffer at a
// time.
func (w *chunkWriter) copyFrom(ctx context.Context, tx pgx.Tx, r io.Reader) error {
	src := &chunkSource{ctx: ctx, r: r, copy: w.pk, raw: w.raw, first: w.tally.Chunks, buf: make([]byte, store.ChunkSize), zbuf: make([]byte, 0, chunkcodec.DstSize(store.ChunkSize))}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"chunks"}, []string{"copy", "seq", "codec", "data"}, src)
	if src.err != nil {
		// The reader failed or ctx ended; COPY was aborted because of it.
		// Report the cause, not the server's "COPY failed".
		if errors.Is(src.err, context.Canceled) || errors.Is(src.err, context.DeadlineExceeded) {
			return src.err
		}
		return &inputError{src.err}
	}
	if err != nil {
		return err
	}
	w.tally.Merge(src.tally)
	return nil
}

// inputError is a failure of the reader handed to SaveCopy, reported as
// such rather than as a database error.
type inputError struct{ err error }

func (e *inputError) Error() string { return "reading the output: " + e.err.Error() }
func (e *inputError) Unwrap() error { return e.err }

// finishCopy records the copy's totals and meta and makes it visible.
func finishCopy(ctx context.Context, tx pgx.Tx, w *chunkWriter, info *store.CopyInfo) error {
	info.TotalBytes, info.Lines = w.tally.Total, w.tally.Lines()
	if err := tx.QueryRow(ctx, `
UPDATE copies SET total_bytes = $1, lines = $2, stored_bytes = $3, tool = $4, source = $5, complete = $6,
	omitted_bytes = $7, omitted_lines = $8, created_at = clock_timestamp(), last_read_at = clock_timestamp(), pending = false
WHERE pk = $9 RETURNING created_at`,
		info.TotalBytes, info.Lines, w.tally.Stored, []byte(info.Tool), []byte(info.Source), info.Complete,
		info.OmittedBytes, info.OmittedLines, w.pk).Scan(&info.CreatedAt); err != nil {
		return err
	}
	return nil
}

// chunkSource feeds COPY FROM one chunk row at a time from r, reusing one
// buffer, so memory does not grow with the copy.
type chunkSource struct {
	ctx   context.Context
	r     io.Reader
	copy  int64
	raw   bool // store chunks uncompressed
	buf   []byte
	zbuf  []byte // the current row's compressed bytes, when compressed
	row   []byte // what the current row stores: buf[:n] or zbuf
	codec int16
	n     int   // bytes in buf for the current row
	first int64 // the first row's chunk number
	seq   int64 // the current row's chunk number
	tally chunkcodec.Tally
	eof   bool
	err   error // the reader's or the context's error, which aborts the save
}

// maxEmptyReads is how many (0, nil) reads in a row count as a stuck reader,
// as in bufio.
const maxEmptyReads = 100

func (s *chunkSource) Next() bool {
	if s.eof || s.err != nil {
		return false
	}
	s.n = 0
	empty := 0
	for s.n < len(s.buf) {
		if err := s.ctx.Err(); err != nil {
			s.err = err
			return false
		}
		m, err := s.r.Read(s.buf[s.n:])
		s.n += m
		if m == 0 && err == nil {
			if empty++; empty >= maxEmptyReads {
				s.err = io.ErrNoProgress
				return false
			}
			continue
		}
		empty = 0
		if err == io.EOF {
			s.eof = true
			break
		}
		if err != nil {
			s.err = err
			return false
		}
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return false
	}
	if s.n == 0 {
		return false
	}
	s.seq = s.first + s.tally.Chunks
	var codec int
	s.row, codec = s.buf[:s.n], chunkcodec.Raw
	if !s.raw {
		s.row, codec = chunkcodec.Encode(s.zbuf, s.buf[:s.n])
	}
	s.codec = int16(codec)
	s.tally.Add(s.buf[:s.n], len(s.row))
	return true
}

func (s *chunkSource) Values() ([]any, error) {
	return []any{s.copy, int32(s.seq), s.codec, s.row}, nil
}

func (s *chunkSource) Err() error { return s.err }

const copyColumns = "id, session, tool, source, total_bytes, lines, complete, omitted_bytes, omitted_lines, created_at"

func scanCopy(row pgx.Row) (store.CopyInfo, error) {
	var c store.CopyInfo
	var tool, source []byte
	err := row.Scan(&c.ID, &c.Session, &tool, &source, &c.TotalBytes, &c.Lines, &c.Complete, &c.OmittedBytes, &c.OmittedLines, &c.CreatedAt)
	c.Tool, c.Source = string(tool), string(source)
	return c, err
}

// StatCopy returns the copy's info, or store.ErrCopyNotFound.
func (db *DB) StatCopy(ctx context.Context, session, id string) (store.CopyInfo, error) {
	if !store.ValidID(store.SessionPrefix, session) || !store.ValidID(store.CopyPrefix, id) {
		return store.CopyInfo{}, store.ErrCopyNotFound
	}
	var c store.CopyInfo
	err := db.retry(ctx, func() (err error) {
		c, err = scanCopy(db.pool.QueryRow(ctx, "SELECT "+copyColumns+" FROM copies WHERE session = $1 AND id = $2 AND NOT pending", session, id))
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return store.CopyInfo{}, db.missing(ctx, session, id)
	}
	return c, db.wrap("stat copy", err)
}

// CopySession returns the id of owner's session that holds copy id, or
// held it until it was evicted, in one query of the unique copy ids.
func (db *DB) CopySession(ctx context.Context, owner, id string) (string, error) {
	if !store.ValidID(store.CopyPrefix, id) {
		return "", store.ErrCopyNotFound
	}
	var session string
	err := db.retry(ctx, func() error {
		return db.pool.QueryRow(ctx, `
			SELECT c.session FROM copies c JOIN sessions s ON s.id = c.session WHERE c.id = $1 AND s.owner = $2 AND NOT c.pending
			UNION ALL
			SELECT e.session FROM evicted e JOIN sessions s ON s.id = e.session WHERE e.id = $1 AND s.owner = $2
			LIMIT 1`, id, []byte(owner)).Scan(&session)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", store.ErrCopyNotFound
	}
	return session, db.wrap("find copy", err)
}

// ListCopies returns the session's copies, oldest first. A session that
// does not exist has none.
func (db *DB) ListCopies(ctx context.Context, session string) ([]store.CopyInfo, error) {
	if !store.ValidID(store.SessionPrefix, session) {
		return nil, nil
	}
	var list []store.CopyInfo
	err := db.retry(ctx, func() error {
		rows, err := db.pool.Query(ctx, "SELECT "+copyColumns+" FROM copies WHERE session = $1 AND NOT pending ORDER BY created_at, pk", session)
		if err != nil {
			return err
		}
		list, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.CopyInfo, error) { return scanCopy(r) })
		return err
	})
	return list, db.wrap("list copies", err)
}

// readQuery fetches, in one round trip, the copy's info (but its id and
// session, which are $2 and $1) and the parts of
// the chunks [$5, $6] that hold bytes [$3, $4): of a raw chunk only those
// bytes (the substring bounds are the ones piece computes, in SQL), of a
// compressed one all of it, to decompress and cut with piece here.
const readQuery = `
SELECT c.tool, c.source, c.total_bytes, c.lines, c.complete, c.omitted_bytes, c.omitted_lines, c.created_at,
	k.seq, k.codec,
	CASE k.codec WHEN 0 THEN
	substring(k.data FROM (greatest($3::bigint - k.seq::bigint * $7::bigint, 0) + 1)::int
	                 FOR ($4::bigint - greatest($3::bigint, k.seq::bigint * $7::bigint))::int)
	ELSE k.data END
FROM copies c LEFT JOIN chunks k ON k.copy = c.pk AND k.seq BETWEEN $5::bigint AND $6::bigint
WHERE c.session = $1 AND c.id = $2 AND NOT c.pending
ORDER BY k.seq`

// piece returns where, within chunk seq, the bytes of [off, end) start and
// how many there are (at most; the chunk may end first). It mirrors the
// substring bounds of readQuery, with a 0-based from.
func piece(seq, off, end int64) (from, n int64) {
	const C = store.ChunkSize
	return max(off-seq*C, 0), end - max(off, seq*C)
}

// chunkRange returns the first and last chunk holding bytes of [off, end),
// for end > off >= 0.
func chunkRange(off, end int64) (first, last int64) {
	return off / store.ChunkSize, (end - 1) / store.ChunkSize
}

// ReadCopyAt reads len(p) bytes of the copy from offset off, with
// io.ReaderAt semantics. It reads only the chunks that hold those bytes
// (one or two for a page of at most 4 KiB), and of them only those bytes.
func (db *DB) ReadCopyAt(ctx context.Context, session, id string, p []byte, off int64) (int, error) {
	_, n, err := db.StatReadCopyAt(ctx, session, id, p, off)
	return n, err
}

// StatReadCopyAt is StatCopy and ReadCopyAt in the one round trip
// ReadCopyAt makes: the copy's info comes with every row of its chunks.
func (db *DB) StatReadCopyAt(ctx context.Context, session, id string, p []byte, off int64) (store.CopyInfo, int, error) {
	if !store.ValidID(store.SessionPrefix, session) || !store.ValidID(store.CopyPrefix, id) {
		return store.CopyInfo{}, 0, store.ErrCopyNotFound
	}
	if off < 0 {
		info, err := db.StatCopy(ctx, session, id)
		if err != nil {
			return store.CopyInfo{}, 0, err
		}
		return info, 0, fmt.Errorf("%w: offset %d is negative", store.ErrOffset, off)
	}
	end := off + int64(len(p))
	if end < off { // overflow: such an offset is past any copy's end anyway
		end = math.MaxInt64
	}
	first, last := int64(0), int64(-1) // no chunks when p is empty
	if len(p) > 0 {
		first, last = chunkRange(off, end)
	}
	var n int
	var info store.CopyInfo
	found := false
	err := db.retry(ctx, func() error {
		n, found = 0, false
		rows, err := db.pool.Query(ctx, readQuery, session, id, off, end, first, last, int64(store.ChunkSize))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var seq *int32
			var codec *int16
			var data, tool, source []byte
			if err := rows.Scan(&tool, &source, &info.TotalBytes, &info.Lines, &info.Complete,
				&info.OmittedBytes, &info.OmittedLines, &info.CreatedAt, &seq, &codec, &data); err != nil {
				return err
			}
			if !found {
				found, info.ID, info.Session, info.Tool, info.Source = true, id, session, string(tool), string(source)
			}
			if seq == nil {
				continue // the copy has no chunk in range: empty, or off at or past its end
			}
			if pos := max(int64(*seq)*store.ChunkSize-off, 0); pos != int64(n) {
				return fmt.Errorf("copy %s is damaged: chunk %d not where expected (offset %d, have %d bytes)", id, *seq, off+pos, off+int64(n))
			}
			if *codec != chunkcodec.Raw {
				// Past the chunk's end (an offset past the copy's), the
				// piece is empty, as substring's is; the checks below say
				// what was wrong.
				from, _ := piece(int64(*seq), off, end)
				m, err := db.chunks.Read(p[n:], id, int64(*seq), int(*codec), data, from)
				if err != nil {
					return fmt.Errorf("copy %s is damaged: %w", id, err)
				}
				n += m
				continue
			}
			n += copy(p[n:], data)
		}
		return rows.Err()
	})
	if err != nil {
		return store.CopyInfo{}, 0, db.wrap("read copy", err)
	}
	if !found {
		return store.CopyInfo{}, 0, db.missing(ctx, session, id)
	}
	db.markRead(session, id)
	total := info.TotalBytes
	if off > total {
		return info, 0, fmt.Errorf("%w: offset %d is past the end of the copy (%d bytes)", store.ErrOffset, off, total)
	}
	want := min(int64(len(p)), total-off)
	if int64(n) != want {
		return info, n, &Error{Op: "read copy", Server: db.server,
			Err:  fmt.Errorf("copy %s is damaged: read %d bytes at offset %d, want %d", id, n, off, want),
			Hint: "the copy's chunks are missing; delete its session"}
	}
	if want < int64(len(p)) {
		return info, n, io.EOF
	}
	return info, n, nil
}
