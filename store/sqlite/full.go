package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/scrollback-dev/scrollback/store"
)

// failures keeps the latest failed save of this process until it is
// written down in the database (see saveFailed).
type failures struct {
	mu      sync.Mutex
	last    *store.SaveFailure
	written bool // last is in the save_failures table
	busy    bool // last failed for the write lock, which may still be held
}

// saveFailed is what a save (SaveCopy, or a pending copy's BeginCopy,
// Append or Finish) does with its error err before returning it. A
// failure of the database's own is recorded for Stats. One for lack of
// space first gives back what the failed save took, so that the next
// save that fits is retained:
//
//   - the rows of the pending copy pk (when not 0), which its earlier
//     appends committed, are deleted, and the pages freed at the end of
//     the file dropped (incremental vacuum), in one transaction whose few
//     pages of log fit in the room every save leaves free (diskReserve);
//   - the write-ahead log is checkpointed into the file and truncated
//     (wal_checkpoint(TRUNCATE)). Without this the log kept everything
//     the failed save had appended (2.4 MB on a 3 MiB file system), and
//     could not be checkpointed either, as that would grow the file by as
//     much: every later save failed too, until someone freed disk space.
//
// It reports whether the pending copy's rows are gone.
func (d *DB) saveFailed(ctx context.Context, session string, pk int64, err error) (gone bool) {
	var e *Error
	if d.readOnly || !errors.As(err, &e) {
		return false // the input's error, a lookup, a cancellation
	}
	ctx = context.WithoutCancel(ctx)
	f := &store.SaveFailure{At: time.Now().UTC(), Session: session, Error: err.Error(), Full: errors.Is(err, ErrFull)}
	d.fails.mu.Lock()
	d.fails.last, d.fails.written, d.fails.busy = f, false, errors.Is(err, ErrBusy)
	d.fails.mu.Unlock()
	if f.Full {
		gone = d.giveBack(ctx, pk, f) && pk != 0
	}
	if errors.Is(err, ErrBusy) {
		// Another process holds the write lock: writing the failure down
		// would wait for it another busy timeout, and fail the same way,
		// while the caller waits for its result. Close tries, briefly.
		return gone
	}
	d.writeFailure(ctx)
	return gone
}

// giveBack deletes the pending copy pk (when not 0), drops the free pages
// at the end of the file, and checkpoints and truncates the write-ahead
// log: see saveFailed.
//
// The vacuum runs with cache spilling off: it touches every page it
// drops, and with the pager spilling them to the log mid-transaction (as
// it does past its 2 MB cache) the transaction needed room for all of
// them, on a disk that has none. Unspilled, those pages are never written:
// they lie past the end of the file as the transaction leaves it.
//
// The failure f is written down in the same transaction (so that the log
// is truncated with nothing left in it). It reports whether that
// transaction committed: the rows are gone, the failure written.
func (d *DB) giveBack(ctx context.Context, pk int64, f *store.SaveFailure) (committed bool) {
	select {
	case d.writeSem <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	defer func() { <-d.writeSem }()
	conn, err := d.db.Conn(ctx)
	if err != nil {
		return false
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA cache_spill = 0`); err != nil {
		return false
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA cache_spill = 1`)
	err = func() error {
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if pk != 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM copies WHERE pk = ? AND pending`, pk); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
			return err
		}
		if err := insertFailure(ctx, tx, f); err != nil {
			return err
		}
		return tx.Commit()
	}()
	if err == nil {
		d.fails.mu.Lock()
		if d.fails.last == f {
			d.fails.written = true
		}
		d.fails.mu.Unlock()
	}
	// Checkpointed even when the transaction failed: what the failed save
	// wrote to the log and rolled back goes with it.
	d.checkpoint(ctx, conn)
	return err == nil
}

// insertFailure writes f down as the latest failed save.
func insertFailure(ctx context.Context, tx *sql.Tx, f *store.SaveFailure) error {
	_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO save_failures (id, at, session, error, full) VALUES (1, ?, ?, ?, ?)`,
		f.At.UnixNano(), f.Session, f.Error, f.Full)
	return err
}

// checkpoint copies the write-ahead log into the database file, and
// truncates both (the file to its pages, the log to nothing), on conn,
// waiting up to the busy timeout for other processes' readers and
// writers. The caller holds writeSem.
func (d *DB) checkpoint(ctx context.Context, conn *sql.Conn) error {
	var busy, logged, done int
	if err := conn.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &done); err != nil {
		return wrap("checkpoint the write-ahead log", d.path, err)
	}
	if busy != 0 {
		return &Error{Op: "checkpoint the write-ahead log", Path: d.path, Err: ErrBusy,
			Hint: "another process is reading or writing the database; its next checkpoint truncates the log"}
	}
	return nil
}

// diskReserve is the free space a save leaves on the database's file
// system: it fails for lack of space (ErrFull) rather than write a chunk
// into the last diskReserve bytes. Giving back the space of a failed save
// (see saveFailed) is itself a write, of a few dozen pages to the log and
// into the file; on a file system filled to the last byte it could not
// be made, and the log, holding all the failed copy had appended, stayed
// and filled it for every later save. For the largest failed copy (8 MiB
// of random bytes, appended while its command ran) it took 128-192 KiB
// (TestDiskFull fails with 128 KiB left, passes with 192); 512 KiB leaves
// room to spare. Where the platform does not say how much is free (see
// diskFree), SQLite's own SQLITE_FULL is all there is, and giving back is
// attempted all the same.
const diskReserve = 512 << 10

// lowDiskError is a save refused for the room it would leave (see
// diskReserve); wrap classifies it as ErrFull.
type lowDiskError struct{ free, need int64 }

func (e *lowDiskError) Error() string {
	return fmt.Sprintf("its file system has %d bytes free, the save needs more than %d of them, and saves leave %d free (room to give back the space of a failed save)",
		e.free, e.need, int64(diskReserve))
}

// room bounds what one write transaction of a save adds to the file
// system: it reads the free space once, when the transaction writes its
// first chunk, and counts every chunk written since, since SQLite writes
// them when its cache spills or the transaction commits, not as they are
// inserted.
type room struct {
	dir      string // the database's directory; "" for no bound
	measured bool
	free     int64 // when the transaction began writing; -1: not known
	need     int64 // what its chunks take so far, with their overhead
}

// begin starts counting for a new transaction of a copy that has stored
// bytes already (a pending copy's earlier appends): they are in the log,
// to be checkpointed into the file with the rest, so they count once
// more.
func (r *room) begin(stored int64) { r.measured, r.need = false, stored+stored/32 }

// take counts n more bytes of chunk, and returns a *lowDiskError when the
// transaction would leave less than diskReserve free; nil when it would
// not, or when the free space is not known.
func (r *room) take(n int) error {
	if r.dir == "" {
		return nil
	}
	if !r.measured {
		r.measured, r.free = true, -1
		if free, ok := diskFree(r.dir); ok {
			r.free = free
		}
	}
	// A chunk takes its bytes in the log, and some more in b-tree pages
	// and frame headers; and as much again in the file when the log is
	// checkpointed (with Options.LeaveLog, by the next process). Counted
	// once, a copy that fit in the log could leave too little room to
	// checkpoint it: the checkpoint filled the disk, and no write could
	// be made again, not even deleting a session to make room. The file's
	// free pages, which the checkpoint would fill first, are not counted:
	// near a full disk this errs on the side of the database.
	r.need += 2*(int64(n)+int64(n)/32) + 4<<10
	if r.free >= 0 && r.free-r.need < diskReserve {
		return &lowDiskError{free: r.free, need: r.need}
	}
	return nil
}

// writeFailure writes the latest failed save down, if it is not yet.
func (d *DB) writeFailure(ctx context.Context) {
	d.fails.mu.Lock()
	f, written := d.fails.last, d.fails.written
	d.fails.mu.Unlock()
	if f == nil || written || d.readOnly {
		return
	}
	err := d.write(ctx, "record a failed save", func(tx *sql.Tx) error { return insertFailure(ctx, tx, f) })
	if err == nil {
		d.fails.mu.Lock()
		if d.fails.last == f {
			d.fails.written = true
		}
		d.fails.mu.Unlock()
	}
}

// lastFailure returns the latest failed save, of session when not "":
// the database's record or this process's, whichever is newer.
func (d *DB) lastFailure(ctx context.Context, session string) (*store.SaveFailure, error) {
	var f store.SaveFailure
	var at int64
	err := d.db.QueryRowContext(ctx, `SELECT at, session, error, full FROM save_failures WHERE ?1 = '' OR session = ?1`, session).
		Scan(&at, &f.Session, &f.Error, &f.Full)
	var out *store.SaveFailure
	switch {
	case err == nil:
		f.At = fromNanos(at)
		out = &f
	case !errors.Is(err, sql.ErrNoRows):
		return nil, err
	}
	d.fails.mu.Lock()
	defer d.fails.mu.Unlock()
	if m := d.fails.last; m != nil && (session == "" || m.Session == session) && (out == nil || m.At.After(out.At)) {
		c := *m
		out = &c
	}
	return out, nil
}

// freeSpace returns the bytes of the file's free pages, and the free
// space of its file system when the platform says it cheaply.
func (d *DB) freeSpace(ctx context.Context) (free int64, disk *int64, err error) {
	var pages, size int64
	if err := d.db.QueryRowContext(ctx, `SELECT freelist_count, page_size FROM pragma_freelist_count(), pragma_page_size()`).Scan(&pages, &size); err != nil {
		return 0, nil, err
	}
	if n, ok := diskFree(filepath.Dir(d.path)); ok {
		disk = &n
	}
	return pages * size, disk, nil
}
