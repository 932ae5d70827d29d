package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/scrollback-dev/scrollback/store"
)

var _ store.Streamer = (*DB)(nil)

// errPendingGone: the pending copy was deleted (abandoned for longer than
// store.StalePending, or its session deleted) while its writer was away.
var errPendingGone = errors.New("sqlite: the pending copy is gone (abandoned too long, or its session was deleted)")

// BeginCopy starts a copy in session that stays invisible until Finish.
// Each Append is its own short write transaction, so other writers never
// wait for a slow producer.
func (d *DB) BeginCopy(ctx context.Context, session string) (store.PendingCopy, error) {
	if !store.ValidID(store.SessionPrefix, session) {
		return nil, store.ErrSessionNotFound
	}
	p := &pendingCopy{d: d, info: store.CopyInfo{ID: store.NewID(store.CopyPrefix), Session: session}}
	// The write-ahead log is copied into the file now, while the command
	// making this copy runs, rather than by an automatic checkpoint in the
	// middle of the copy or after it (Options.LeaveLog leaves the log of
	// the last process's saves for this). Passive: it waits for nobody,
	// and what it cannot copy now a later checkpoint does.
	if !d.readOnly {
		d.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
	}
	err := d.write(ctx, "begin copy", func(tx *sql.Tx) (err error) {
		p.w.pk, err = insertCopy(ctx, tx, &p.info, true)
		return err
	})
	if err != nil {
		d.saveFailed(ctx, session, 0, err)
		return nil, err
	}
	p.w.raw, p.w.room = d.raw, room{dir: filepath.Dir(d.path)}
	return p, nil
}

type pendingCopy struct {
	d    *DB
	info store.CopyInfo
	w    chunkWriter
	done bool
}

// touch renews the heartbeat of a pending copy, or says it is gone.
func (p *pendingCopy) touch(ctx context.Context, tx *sql.Tx) error {
	res, err := tx.ExecContext(ctx, `UPDATE copies SET last_read_at = ? WHERE pk = ? AND pending`, now(), p.w.pk)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return errPendingGone
	}
	return nil
}

func (p *pendingCopy) Append(ctx context.Context, b []byte) error {
	if p.done {
		return errors.New("sqlite: append to a copy already finished or aborted")
	}
	if len(b)%store.ChunkSize != 0 {
		return fmt.Errorf("sqlite: append %d bytes: want a multiple of the chunk size, %d", len(b), store.ChunkSize)
	}
	w := p.w // on failure nothing of this append counts
	err := p.d.write(ctx, "append to copy", func(tx *sql.Tx) error {
		if err := p.touch(ctx, tx); err != nil {
			return err
		}
		insert, err := prepareInsert(ctx, tx)
		if err != nil {
			return err
		}
		defer insert.Close()
		w.room.begin(w.tally.Stored)
		for off := 0; off < len(b); off += store.ChunkSize {
			if err := w.write(ctx, insert, b[off:off+store.ChunkSize]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		p.failed(ctx, err)
		return err
	}
	p.w = w
	return nil
}

// failed hands the error of an Append or Finish to saveFailed; when that
// deleted the copy's rows (to give their space back), the copy is done.
func (p *pendingCopy) failed(ctx context.Context, err error) {
	if p.d.saveFailed(ctx, p.info.Session, p.w.pk, err) {
		p.done = true
	}
}

func (p *pendingCopy) Finish(ctx context.Context, meta store.CopyMeta, r io.Reader) (store.CopyInfo, error) {
	if p.done {
		return store.CopyInfo{}, errors.New("sqlite: finish a copy already finished or aborted")
	}
	info := p.info
	info.Tool, info.Source, info.Complete = meta.Tool, meta.Source, meta.Complete
	info.OmittedBytes, info.OmittedLines = meta.OmittedBytes, meta.OmittedLines
	w := p.w
	err := p.d.write(ctx, "save copy", func(tx *sql.Tx) error {
		if err := p.touch(ctx, tx); err != nil {
			return err
		}
		if err := w.copyFrom(ctx, tx, r); err != nil {
			return err
		}
		return p.d.finish(ctx, tx, &w, &info)
	})
	if err != nil {
		p.failed(ctx, err)
		return store.CopyInfo{}, err
	}
	p.done = true
	return info, nil
}

func (p *pendingCopy) Abort(ctx context.Context) error {
	if p.done {
		return nil
	}
	p.done = true
	return p.d.write(ctx, "abort copy", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM copies WHERE pk = ? AND pending`, p.w.pk)
		return err
	})
}

// deleteAbandoned deletes pending copies idle for longer than
// store.StalePending: their writer crashed or was killed. A heartbeat
// more than StalePending in the future was written before the clock was
// set back: a live writer has written a later one since, so it is
// abandoned too (at worst its writer saves the copy whole: see
// errPendingGone). Their pages go
// back to the file system, as a deleted session's do (up to a copy's cap
// for each killed save, which would otherwise stay free in the file).
func deleteAbandoned(ctx context.Context, db *sql.DB) error {
	// Looked for first, without the write lock: there rarely are any,
	// and an Open must not queue behind other processes' saves for nothing.
	at := time.Now()
	cutoff, ahead := at.Add(-store.StalePending).UnixNano(), at.Add(store.StalePending).UnixNano()
	var any bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM copies WHERE pending AND (last_read_at < ?1 OR last_read_at > ?2))`, cutoff, ahead).Scan(&any); err != nil {
		return err
	}
	if !any {
		return nil
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, `DELETE FROM copies WHERE pending AND (last_read_at < ?1 OR last_read_at > ?2)`, cutoff, ahead)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n > 0 {
		if _, err := tx.ExecContext(ctx, `PRAGMA incremental_vacuum`); err != nil {
			return err
		}
	}
	return tx.Commit()
}
