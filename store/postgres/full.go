package postgres

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/scrollback-dev/scrollback/store"
)

// failures keeps the latest failed save of this instance until it is
// written down in the database (see saveFailed).
type failures struct {
	mu      sync.Mutex
	last    *store.SaveFailure
	written bool // last is in the save_failures table
}

// saveFailed is what a save (SaveCopy, or a pending copy's BeginCopy,
// Append or Finish) does with its error err before returning it. A
// failure of the database's own is recorded for Stats. One for lack of
// space (ErrFull: the server's disk, a quota) first gives back what the
// failed save took, so that the next save that fits is retained: the rows
// of the pending copy pk (when not 0), which its earlier appends
// committed, are deleted, and a VACUUM of the chunks is started, which
// makes the space of those rows, and of the rows the failed transaction
// wrote and rolled back, reusable (PostgreSQL reuses a dead row's space
// only once a VACUUM has seen it; without it every later save took new
// pages on the full disk, and failed too). Close waits for that VACUUM
// (see vacuumer.urgent).
//
// It reports whether the pending copy's rows are gone.
func (db *DB) saveFailed(ctx context.Context, session string, pk int64, err error) (gone bool) {
	var e *Error
	if !errors.As(err, &e) {
		return false // the input's error, a lookup, a cancellation
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	f := &store.SaveFailure{At: time.Now().UTC(), Session: session, Error: err.Error(), Full: errors.Is(err, ErrFull)}
	db.fails.mu.Lock()
	db.fails.last, db.fails.written = f, false
	db.fails.mu.Unlock()
	if f.Full {
		if pk != 0 {
			_, derr := db.exec(ctx, "DELETE FROM copies WHERE pk = $1 AND pending", pk)
			gone = derr == nil
		}
		db.vac.urgent()
	}
	db.writeFailure(ctx)
	return gone
}

// writeFailure writes the latest failed save down, if it is not yet.
func (db *DB) writeFailure(ctx context.Context) {
	db.fails.mu.Lock()
	f, written := db.fails.last, db.fails.written
	db.fails.mu.Unlock()
	if f == nil || written {
		return
	}
	_, err := db.exec(ctx, `
INSERT INTO save_failures (id, at, session, error, "full") VALUES (1, $1, $2, $3, $4)
ON CONFLICT (id) DO UPDATE SET at = excluded.at, session = excluded.session, error = excluded.error, "full" = excluded."full"`,
		f.At, f.Session, f.Error, f.Full)
	if err == nil {
		db.fails.mu.Lock()
		if db.fails.last == f {
			db.fails.written = true
		}
		db.fails.mu.Unlock()
	}
}

// lastFailure returns the latest failed save, of session when not "":
// the database's record or this instance's, whichever is newer.
func (db *DB) lastFailure(ctx context.Context, session string) (*store.SaveFailure, error) {
	var f store.SaveFailure
	var out *store.SaveFailure
	err := db.retry(ctx, func() error {
		return db.pool.QueryRow(ctx, `SELECT at, session, error, "full" FROM save_failures WHERE $1 = '' OR session = $1`, session).
			Scan(&f.At, &f.Session, &f.Error, &f.Full)
	})
	switch {
	case err == nil:
		f.At = f.At.UTC()
		out = &f
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, err
	}
	db.fails.mu.Lock()
	defer db.fails.mu.Unlock()
	if m := db.fails.last; m != nil && (session == "" || m.Session == session) && (out == nil || m.At.After(out.At)) {
		c := *m
		out = &c
	}
	return out, nil
}
