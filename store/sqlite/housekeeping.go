package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"time"

	"github.com/scrollback-dev/scrollback/store"
)

var (
	_ store.Housekeeper      = (*DB)(nil)
	_ store.RetentionClaimer = (*DB)(nil)
)

// SetLimits sets the quotas SaveCopy enforces; Open starts with
// store.DefaultLimits. Call it before sharing the DB between goroutines.
//
// Eviction goes by when copies were last read. Reads are noted in memory
// and written down by the next write transaction (a save, DeleteIdle,
// Close), so that a page read never waits for the write lock; another
// process's reads count once it saves or closes.
func (d *DB) SetLimits(l store.Limits) { d.limits = l }

// readFlushEvery is how long noted reads wait for a write of this process
// to carry them before they are written down in the background:
// a process that only reads (a stdio MCP server paging through a copy)
// would otherwise keep them until it closes, and other processes' saves
// would evict the copies it reads as if nobody had.
var readFlushEvery = time.Minute

// markRead notes that a copy was read now, and writes the noted reads
// down in the background once they have waited readFlushEvery.
func (d *DB) markRead(session, id string) {
	if d.readOnly {
		return
	}
	d.reads.Mark(session, id, readFlushEvery, func() {
		ctx, cancel := context.WithTimeout(context.Background(), d.busyTimeout+5*time.Second)
		defer cancel()
		// Best effort, as at Close.
		d.write(ctx, "record reads", func(tx *sql.Tx) error { return d.flushReads(ctx, tx) })
	})
}

// flushReads writes the noted reads down in tx: each copy's last read
// time and each session's last use.
func (d *DB) flushReads(ctx context.Context, tx *sql.Tx) error {
	copies, sessions := d.reads.Take()
	for _, r := range copies {
		if _, err := tx.ExecContext(ctx, `UPDATE copies SET last_read_at = max(last_read_at, ?) WHERE id = ?`, r.At.UnixNano(), r.ID); err != nil {
			return err
		}
	}
	for _, r := range sessions {
		if _, err := tx.ExecContext(ctx, `UPDATE sessions SET last_used_at = max(last_used_at, ?) WHERE id = ?`, r.At.UnixNano(), r.ID); err != nil {
			return err
		}
	}
	return nil
}

// setBackFuture sets use and read times more than store.ClockSlack ahead
// of now back to now: they were written before the clock was set back.
// Both lookups are on indexes, and find nothing but after a clock step.
func setBackFuture(ctx context.Context, tx *sql.Tx, now int64) error {
	ahead := now + store.ClockSlack.Nanoseconds()
	if _, err := tx.ExecContext(ctx, `UPDATE sessions SET last_used_at = ?1 WHERE last_used_at > ?2`, now, ahead); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `UPDATE copies SET last_read_at = ?1 WHERE last_read_at > ?2 AND NOT pending`, now, ahead)
	return err
}

// evict deletes the least recently read copies (never keep, the copy just
// saved) until the session is within its quota and the database within
// its cap, leaving each evicted id's time behind for missing to report.
func (d *DB) evict(ctx context.Context, tx *sql.Tx, session string, keep int64) error {
	if q := d.limits.SessionQuota; q > 0 {
		if err := d.evictOver(ctx, tx, q, keep,
			`SELECT coalesce(sum(stored_bytes), 0) FROM copies WHERE session = ?1 AND NOT pending`,
			`SELECT pk, id, session, stored_bytes FROM copies WHERE session = ?1 AND pk != ?2 AND NOT pending ORDER BY last_read_at, pk`,
			session); err != nil {
			return err
		}
	}
	if c := d.limits.DBCap; c > 0 {
		return d.evictOver(ctx, tx, c, keep,
			`SELECT coalesce(sum(stored_bytes), 0) FROM copies WHERE ?1 = ?1 AND NOT pending`,
			`SELECT pk, id, session, stored_bytes FROM copies WHERE ?1 = ?1 AND pk != ?2 AND NOT pending ORDER BY last_read_at, pk`,
			"")
	}
	return nil
}

// evictOver evicts, in the order victims lists them, until the total
// usedQuery sums is at most limit or nothing but keep is left. The
// evicted copies' cached chunks are dropped (a reader would never be
// served them anyway: see chunkcodec.Cache).
func (d *DB) evictOver(ctx context.Context, tx *sql.Tx, limit, keep int64, usedQuery, victims, scope string) error {
	var used int64
	if err := tx.QueryRowContext(ctx, usedQuery, scope).Scan(&used); err != nil {
		return err
	}
	if used <= limit {
		return nil
	}
	type victim struct {
		pk          int64
		id, session string
		stored      int64
	}
	var vs []victim
	rows, err := tx.QueryContext(ctx, victims, scope, keep)
	if err != nil {
		return err
	}
	for used > limit && rows.Next() {
		var v victim
		if err := rows.Scan(&v.pk, &v.id, &v.session, &v.stored); err != nil {
			rows.Close()
			return err
		}
		vs = append(vs, v)
		used -= v.stored
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	at := now()
	for _, v := range vs {
		if _, err := tx.ExecContext(ctx, `DELETE FROM copies WHERE pk = ?`, v.pk); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO evicted (id, session, at) VALUES (?, ?, ?)`, v.id, v.session, at); err != nil {
			return err
		}
		d.chunks.Forget(v.id)
		d.infos.forget(v.id)
	}
	_, err = tx.ExecContext(ctx, `UPDATE counters SET value = value + ? WHERE name = 'evictions'`, len(vs))
	return err
}

// Stats returns what the database holds, or one session (of any owner).
func (d *DB) Stats(ctx context.Context, session string) (store.Stats, error) {
	st := store.Stats{Session: session, Limits: d.limits}
	var err error
	if session == "" {
		err = d.db.QueryRowContext(ctx, `SELECT
			(SELECT count(*) FROM sessions),
			(SELECT count(*) FROM copies WHERE NOT pending),
			(SELECT coalesce(sum(total_bytes), 0) FROM copies WHERE NOT pending),
			(SELECT coalesce(sum(stored_bytes), 0) FROM copies WHERE NOT pending),
			(SELECT count(*) FROM copies WHERE pending),
			(SELECT coalesce(sum(length(data)), 0) FROM chunks WHERE copy IN (SELECT pk FROM copies WHERE pending)),
			(SELECT value FROM counters WHERE name = 'evictions'),
			(SELECT value FROM counters WHERE name = 'retention_deletions')`).Scan(
			&st.Sessions, &st.Copies, &st.LogicalBytes, &st.StoredBytes, &st.PendingCopies, &st.PendingStoredBytes,
			&st.Evictions, &st.RetentionDeletions)
	} else {
		if !store.ValidID(store.SessionPrefix, session) {
			return store.Stats{}, store.ErrSessionNotFound
		}
		err = d.db.QueryRowContext(ctx, `SELECT count(*),
			(SELECT count(*) FROM copies WHERE session = ?1 AND NOT pending),
			(SELECT coalesce(sum(total_bytes), 0) FROM copies WHERE session = ?1 AND NOT pending),
			(SELECT coalesce(sum(stored_bytes), 0) FROM copies WHERE session = ?1 AND NOT pending),
			(SELECT count(*) FROM copies WHERE session = ?1 AND pending),
			(SELECT coalesce(sum(length(data)), 0) FROM chunks WHERE copy IN (SELECT pk FROM copies WHERE session = ?1 AND pending)),
			(SELECT count(*) FROM evicted WHERE session = ?1)
			FROM sessions WHERE id = ?1`, session).Scan(
			&st.Sessions, &st.Copies, &st.LogicalBytes, &st.StoredBytes, &st.PendingCopies, &st.PendingStoredBytes, &st.Evictions)
		if err == nil && st.Sessions == 0 {
			return store.Stats{}, store.ErrSessionNotFound
		}
	}
	if err != nil {
		return store.Stats{}, d.readErr("stats", err)
	}
	free, disk, err := d.freeSpace(ctx)
	if err != nil {
		return store.Stats{}, d.readErr("stats", err)
	}
	st.FreeBytes, st.DiskFreeBytes = &free, disk
	if st.LastSaveFailure, err = d.lastFailure(ctx, session); err != nil {
		return store.Stats{}, d.readErr("stats", err)
	}
	for _, p := range []string{d.path, d.path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			st.FileBytes += fi.Size()
		} else if !errors.Is(err, os.ErrNotExist) {
			return store.Stats{}, wrap("stats", d.path, err)
		}
	}
	return st, nil
}

// MarkUsed marks the sessions used now (see store.Housekeeper), in one
// write transaction.
func (d *DB) MarkUsed(ctx context.Context, sessions []string) error {
	if len(sessions) == 0 {
		return nil
	}
	now := time.Now().UnixNano()
	return d.write(ctx, "mark sessions used", func(tx *sql.Tx) error {
		if err := setBackFuture(ctx, tx, now); err != nil {
			return err
		}
		for _, id := range sessions {
			if _, err := tx.ExecContext(ctx, `UPDATE sessions SET last_used_at = max(last_used_at, ?) WHERE id = ?`, now, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// CountIdle reports what DeleteIdle would delete now (see
// store.Housekeeper), in one read-only query: the reads noted and not yet
// written down count as uses without being written.
func (d *DB) CountIdle(ctx context.Context, cutoff time.Time) (store.Idle, error) {
	used := []string{} // sessions whose noted use spares them
	for _, r := range d.reads.Sessions() {
		if !r.At.Before(cutoff) {
			used = append(used, r.ID)
		}
	}
	ids, err := json.Marshal(used)
	if err != nil {
		return store.Idle{}, err
	}
	idle, err := countIdle(ctx, d.db, cutoff, string(ids))
	if err != nil {
		return store.Idle{}, d.readErr("count idle sessions", err)
	}
	return idle, nil
}

// countIdle counts the sessions last used before cutoff, less those whose
// ids the JSON array spared holds, and their copies (as Stats counts them),
// in one query on q: the database, or a transaction.
func countIdle(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, cutoff time.Time, spared string) (store.Idle, error) {
	var idle store.Idle
	err := q.QueryRowContext(ctx, `
WITH idle AS (SELECT id FROM sessions WHERE last_used_at < ?1 AND id NOT IN (SELECT value FROM json_each(?2)))
SELECT (SELECT count(*) FROM idle), count(*), coalesce(sum(total_bytes), 0), coalesce(sum(stored_bytes), 0)
FROM copies WHERE session IN (SELECT id FROM idle) AND NOT pending`, cutoff.UnixNano(), spared).Scan(
		&idle.Sessions, &idle.Copies, &idle.LogicalBytes, &idle.StoredBytes)
	return idle, err
}

// DeleteIdle deletes every session last used before cutoff, with its
// copies, counts them as retention deletions, gives the freed pages back
// to the file system and returns what it deleted, counted in the same
// transaction.
func (d *DB) DeleteIdle(ctx context.Context, cutoff time.Time) (store.Idle, error) {
	var gone store.Idle
	err := d.write(ctx, "delete idle sessions", func(tx *sql.Tx) error {
		if err := setBackFuture(ctx, tx, now()); err != nil {
			return err
		}
		if err := d.flushReads(ctx, tx); err != nil {
			return err
		}
		var err error
		if gone, err = countIdle(ctx, tx, cutoff, "[]"); err != nil || gone.Sessions == 0 {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE last_used_at < ?`, cutoff.UnixNano()); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE counters SET value = value + ? WHERE name = 'retention_deletions'`, gone.Sessions); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `PRAGMA incremental_vacuum`)
		return err
	})
	if err != nil {
		return store.Idle{}, err
	}
	if gone.Sessions > 0 {
		d.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
	}
	return gone, nil
}

// retentionClaimName is the row of the counters table that holds the
// latest retention claim (ClaimRetention), in unix nanoseconds. The table
// holds totals otherwise; a row rather than a table of its own needs no
// schema change, which a program of an earlier release would refuse
// (ErrNewerSchema) on a database it shares.
const retentionClaimName = "retention_claimed_at"

// ClaimRetention reports whether a retention pass is due at now and, when
// it is, records the claim (see store.RetentionClaimer). The common
// answer, not due, is read without the write lock.
func (d *DB) ClaimRetention(ctx context.Context, now time.Time, every time.Duration) (bool, error) {
	at, cutoff := now.UnixNano(), now.Add(-every).UnixNano()
	var last int64
	err := d.db.QueryRowContext(ctx, `SELECT value FROM counters WHERE name = ?`, retentionClaimName).Scan(&last)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return false, d.readErr("read the latest retention claim", err)
	case last > cutoff && last <= at:
		return false, nil
	}
	claimed := false
	err = d.write(ctx, "claim a retention pass", func(tx *sql.Tx) error {
		// Updated only when no other process claimed the pass since the
		// read above: then no row changes.
		r, err := tx.ExecContext(ctx, `INSERT INTO counters (name, value) VALUES (?1, ?2)
ON CONFLICT (name) DO UPDATE SET value = excluded.value WHERE counters.value <= ?3 OR counters.value > ?2`, retentionClaimName, at, cutoff)
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		claimed = n == 1
		return err
	})
	if err != nil {
		return false, err
	}
	return claimed, nil
}
