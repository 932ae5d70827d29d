package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/internal/readlog"
)

var (
	_ store.Housekeeper      = (*DB)(nil)
	_ store.RetentionClaimer = (*DB)(nil)
)

// SetLimits sets the quotas SaveCopy enforces, counted in this database
// (every instance sharing it should set the same); Open starts with
// store.DefaultLimits. Call it before sharing the DB between goroutines.
//
// Eviction goes by when copies were last read. Reads are noted in memory
// and written down by this instance's next write transaction (a save,
// DeleteIdle, Close), so that a page read stays one read-only query.
func (db *DB) SetLimits(l store.Limits) { db.limits = l }

// readFlushEvery is how long noted reads wait for a write of this
// instance to carry them before they are written down in the
// background: an instance that only reads would otherwise keep them until
// it closes, and other instances' saves would evict the copies it reads
// as if nobody had.
var readFlushEvery = time.Minute

// markRead notes that a copy was read now, and writes the noted reads
// down in the background once they have waited readFlushEvery.
func (db *DB) markRead(session, id string) {
	db.reads.Mark(session, id, readFlushEvery, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		db.flushReads(ctx) // best effort, as at Close
	})
}

// flushReads writes the noted reads down: each copy's last read, then
// each session's last use, each in one statement of its own, outside any
// save's transaction, keys sorted, so that it never holds one row while
// waiting for another that a save holds (which could deadlock).
func (db *DB) flushReads(ctx context.Context) error {
	copies, sessions := db.reads.Take()
	if len(copies) == 0 {
		return nil
	}
	ids, ats := split(copies)
	if err := db.quick(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `
UPDATE copies c SET last_read_at = greatest(c.last_read_at, v.at)
FROM unnest($1::text[], $2::timestamptz[]) AS v(id, at) WHERE c.id = v.id`, ids, ats)
		return err
	}); err != nil {
		return err
	}
	ids, ats = split(sessions)
	return db.markUsed(ctx, ids, ats)
}

// split returns the ids and times of reads, as two arrays for unnest.
func split(reads []readlog.Read) ([]string, []time.Time) {
	ids, ats := make([]string, len(reads)), make([]time.Time, len(reads))
	for i, r := range reads {
		ids[i], ats[i] = r.ID, r.At
	}
	return ids, ats
}

// markUsed moves the sessions' last use forward to the given times, in one
// statement, in the order given (sorted, so concurrent calls lock rows in
// the same order).
func (db *DB) markUsed(ctx context.Context, sessions []string, ats []time.Time) error {
	return db.quick(ctx, func(ctx context.Context) error {
		_, err := db.pool.Exec(ctx, `
UPDATE sessions s SET last_used_at = greatest(s.last_used_at, v.at)
FROM unnest($1::text[], $2::timestamptz[]) AS v(id, at) WHERE s.id = v.id`, sessions, ats)
		return err
	})
}

// setBackFuture sets use and read times more than store.ClockSlack ahead
// of the server's clock back to it: they were written before the clock was
// set back, or by a host whose clock runs ahead. Both lookups are on
// indexes, and find nothing but after a clock step.
func setBackFuture(ctx context.Context, q interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}) error {
	slack := fmt.Sprintf("%d seconds", int64(store.ClockSlack/time.Second))
	if _, err := q.Exec(ctx, `UPDATE sessions SET last_used_at = clock_timestamp() WHERE last_used_at > clock_timestamp() + $1::interval`, slack); err != nil {
		return err
	}
	_, err := q.Exec(ctx, `UPDATE copies SET last_read_at = clock_timestamp() WHERE last_read_at > clock_timestamp() + $1::interval AND NOT pending`, slack)
	return err
}

// Advisory lock keys (pg_advisory_xact_lock) that serialise the eviction
// step of concurrent saves, so that each sees the others' copies: one per
// session (keyed by the session id's hash), one for the database cap.
const (
	sessionEvictLock = 0x73636f6c // with hashtext(session) as the second key
	capEvictLock     = 0x7363726f6c6c6263
)

// evict deletes the least recently read copies (never keep, the copy just
// saved) until the session is within its quota and the database within
// its cap, leaving each evicted id's time behind for missing to report.
// It returns how many copies it evicted.
func (db *DB) evict(ctx context.Context, tx pgx.Tx, session string, keep int64) (int, error) {
	n := 0
	if q := db.limits.SessionQuota; q > 0 {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1::int, hashtext($2))", int32(sessionEvictLock), session); err != nil {
			return n, err
		}
		m, err := db.evictOver(ctx, tx, q, keep, "session = $1", session)
		if n += m; err != nil {
			return n, err
		}
	}
	if c := db.limits.DBCap; c > 0 {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(capEvictLock)); err != nil {
			return n, err
		}
		m, err := db.evictOver(ctx, tx, c, keep, "$1::text IS NOT NULL", "")
		return n + m, err
	}
	return n, nil
}

// evictOver evicts the copies scope selects ($1 is arg), least recently
// read first, until their stored bytes are at most limit or nothing but
// keep is left. A copy another save evicted meanwhile is skipped. The
// evicted copies' cached chunks are dropped (a reader would never be
// served them anyway: see chunkcodec.Cache). It returns how many copies it
// evicted.
func (db *DB) evictOver(ctx context.Context, tx pgx.Tx, limit, keep int64, scope, arg string) (int, error) {
	var used int64
	if err := tx.QueryRow(ctx, "SELECT coalesce(sum(stored_bytes), 0)::bigint FROM copies WHERE NOT pending AND "+scope, arg).Scan(&used); err != nil {
		return 0, err
	}
	if used <= limit {
		return 0, nil
	}
	rows, err := tx.Query(ctx, "SELECT pk, id, stored_bytes FROM copies WHERE NOT pending AND "+scope+" AND pk <> $2 ORDER BY last_read_at, pk", arg, keep)
	if err != nil {
		return 0, err
	}
	var pks []int64
	var ids []string
	for used > limit && rows.Next() {
		var pk, stored int64
		var id string
		if err := rows.Scan(&pk, &id, &stored); err != nil {
			rows.Close()
			return 0, err
		}
		pks, ids = append(pks, pk), append(ids, id)
		used -= stored
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	if len(pks) == 0 {
		return 0, nil
	}
	_, err = tx.Exec(ctx, `
WITH gone AS (DELETE FROM copies WHERE pk = ANY($1) RETURNING id, session),
	noted AS (INSERT INTO evicted (id, session) SELECT id, session FROM gone ON CONFLICT (id) DO NOTHING)
UPDATE counters SET value = value + (SELECT count(*) FROM gone) WHERE name = 'evictions'`, pks)
	db.chunks.Forget(ids...)
	return len(pks), err
}

// missing returns the error for a copy the session does not hold: an
// *store.EvictedError when it was evicted from this session, else
// store.ErrCopyNotFound.
func (db *DB) missing(ctx context.Context, session, id string) error {
	var at time.Time
	err := db.retry(ctx, func() error {
		return db.pool.QueryRow(ctx, "SELECT at FROM evicted WHERE session = $1 AND id = $2", session, id).Scan(&at)
	})
	switch {
	case err == nil:
		return &store.EvictedError{ID: id, At: at}
	case errors.Is(err, pgx.ErrNoRows):
		return store.ErrCopyNotFound
	}
	return db.wrap("read copy", err)
}

// Stats returns what the database holds, or one session (of any owner).
// FileBytes is pg_database_size: everything in the database, scrollback's
// tables and any other.
func (db *DB) Stats(ctx context.Context, session string) (store.Stats, error) {
	st := store.Stats{Session: session, Limits: db.limits}
	if session != "" && !store.ValidID(store.SessionPrefix, session) {
		return store.Stats{}, store.ErrSessionNotFound
	}
	err := db.retry(ctx, func() error {
		if session == "" {
			return db.pool.QueryRow(ctx, `SELECT
	(SELECT count(*) FROM sessions),
	(SELECT count(*) FROM copies WHERE NOT pending),
	(SELECT coalesce(sum(total_bytes), 0)::bigint FROM copies WHERE NOT pending),
	(SELECT coalesce(sum(stored_bytes), 0)::bigint FROM copies WHERE NOT pending),
	(SELECT count(*) FROM copies WHERE pending),
	(SELECT coalesce(sum(octet_length(data)), 0)::bigint FROM chunks WHERE copy IN (SELECT pk FROM copies WHERE pending)),
	(SELECT value FROM counters WHERE name = 'evictions'),
	(SELECT value FROM counters WHERE name = 'retention_deletions'),
	pg_database_size(current_database())`).Scan(
				&st.Sessions, &st.Copies, &st.LogicalBytes, &st.StoredBytes, &st.PendingCopies, &st.PendingStoredBytes,
				&st.Evictions, &st.RetentionDeletions, &st.FileBytes)
		}
		return db.pool.QueryRow(ctx, `SELECT count(*),
	(SELECT count(*) FROM copies WHERE session = $1 AND NOT pending),
	(SELECT coalesce(sum(total_bytes), 0)::bigint FROM copies WHERE session = $1 AND NOT pending),
	(SELECT coalesce(sum(stored_bytes), 0)::bigint FROM copies WHERE session = $1 AND NOT pending),
	(SELECT count(*) FROM copies WHERE session = $1 AND pending),
	(SELECT coalesce(sum(octet_length(data)), 0)::bigint FROM chunks WHERE copy IN (SELECT pk FROM copies WHERE session = $1 AND pending)),
	(SELECT count(*) FROM evicted WHERE session = $1),
	pg_database_size(current_database())
FROM sessions WHERE id = $1`, session).Scan(
			&st.Sessions, &st.Copies, &st.LogicalBytes, &st.StoredBytes, &st.PendingCopies, &st.PendingStoredBytes, &st.Evictions, &st.FileBytes)
	})
	if err != nil {
		return store.Stats{}, db.wrap("stats", err)
	}
	if session != "" && st.Sessions == 0 {
		return store.Stats{}, store.ErrSessionNotFound
	}
	// FreeBytes and DiskFreeBytes stay unknown: the files are the
	// server's, and the free space in them is not counted cheaply.
	if st.LastSaveFailure, err = db.lastFailure(ctx, session); err != nil {
		return store.Stats{}, db.wrap("stats", err)
	}
	return st, nil
}

// MarkUsed marks the sessions used now (see store.Housekeeper), in one
// statement, the ids sorted (see markUsed).
func (db *DB) MarkUsed(ctx context.Context, sessions []string) error {
	if len(sessions) == 0 {
		return nil
	}
	ids := slices.Sorted(slices.Values(sessions))
	ids = slices.Compact(ids)
	if err := setBackFuture(ctx, db.pool); err != nil {
		return db.wrap("mark sessions used", err)
	}
	ats := make([]time.Time, len(ids))
	now := time.Now()
	for i := range ats {
		ats[i] = now
	}
	return db.wrap("mark sessions used", db.markUsed(ctx, ids, ats))
}

// CountIdle reports what DeleteIdle would delete now (see
// store.Housekeeper), in one read-only query: the reads this instance
// noted and has not written down yet count as uses without being written.
func (db *DB) CountIdle(ctx context.Context, cutoff time.Time) (store.Idle, error) {
	used := []string{} // sessions whose noted use spares them
	for _, r := range db.reads.Sessions() {
		if !r.At.Before(cutoff) {
			used = append(used, r.ID)
		}
	}
	var idle store.Idle
	err := db.retry(ctx, func() error {
		return db.pool.QueryRow(ctx, `
WITH idle AS (SELECT id FROM sessions WHERE last_used_at < $1 AND NOT (id = ANY($2::text[])))
SELECT (SELECT count(*) FROM idle), count(*), coalesce(sum(total_bytes), 0)::bigint, coalesce(sum(stored_bytes), 0)::bigint
FROM copies WHERE session IN (SELECT id FROM idle) AND NOT pending`, cutoff, used).Scan(
			&idle.Sessions, &idle.Copies, &idle.LogicalBytes, &idle.StoredBytes)
	})
	if err != nil {
		return store.Idle{}, db.wrap("count idle sessions", err)
	}
	return idle, nil
}

// DeleteIdle deletes every session last used before cutoff, with its
// copies, counts them as retention deletions and returns what it deleted.
// The rows' space is made reusable by a VACUUM in the background (see
// SetVacuumErrorLog).
func (db *DB) DeleteIdle(ctx context.Context, cutoff time.Time) (store.Idle, error) {
	if err := db.flushReads(ctx); err != nil {
		return store.Idle{}, db.wrap("delete idle sessions", err)
	}
	var gone store.Idle
	err := pgx.BeginTxFunc(ctx, db.pool, db.tx, func(tx pgx.Tx) error {
		if err := setBackFuture(ctx, tx); err != nil {
			return err
		}
		// One statement, one snapshot: the copies counted are those of
		// the sessions it deletes, as they were before the cascade.
		return tx.QueryRow(ctx, `
WITH gone AS (DELETE FROM sessions WHERE last_used_at < $1 RETURNING id),
counted AS (UPDATE counters SET value = value + (SELECT count(*) FROM gone) WHERE name = 'retention_deletions')
SELECT (SELECT count(*) FROM gone), count(*), coalesce(sum(total_bytes), 0)::bigint, coalesce(sum(stored_bytes), 0)::bigint
FROM copies WHERE session IN (SELECT id FROM gone) AND NOT pending`, cutoff).Scan(
			&gone.Sessions, &gone.Copies, &gone.LogicalBytes, &gone.StoredBytes)
	})
	if err != nil {
		return store.Idle{}, db.wrap("delete idle sessions", err)
	}
	if gone.Sessions > 0 {
		db.vac.soon()
	}
	return gone, nil
}

// retentionClaimName is the row of the counters table that holds the
// latest retention claim (ClaimRetention), in unix nanoseconds. The table
// holds totals otherwise; a row rather than a table of its own needs no
// schema change, which a program of an earlier release would refuse on a
// database it shares.
const retentionClaimName = "retention_claimed_at"

// ClaimRetention reports whether a retention pass is due at now and, when
// it is, records the claim (see store.RetentionClaimer), in one
// statement: a claim not due changes no row.
func (db *DB) ClaimRetention(ctx context.Context, now time.Time, every time.Duration) (bool, error) {
	at, cutoff := now.UnixNano(), now.Add(-every).UnixNano()
	tag, err := db.pool.Exec(ctx, `INSERT INTO counters (name, value) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value WHERE counters.value <= $3 OR counters.value > $2`, retentionClaimName, at, cutoff)
	if err != nil {
		return false, db.wrap("claim a retention pass", err)
	}
	return tag.RowsAffected() == 1, nil
}
