package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/scrollback-dev/scrollback/store"
)

var _ store.Streamer = (*DB)(nil)

// errPendingGone: the pending copy was deleted (abandoned for longer than
// store.StalePending, or its session deleted) while its writer was away.
var errPendingGone = errors.New("postgres: the pending copy is gone (abandoned too long, or its session was deleted)")

// BeginCopy starts a copy in session that stays invisible until Finish.
// Each Append is its own short transaction.
func (db *DB) BeginCopy(ctx context.Context, session string) (store.PendingCopy, error) {
	if !store.ValidID(store.SessionPrefix, session) {
		return nil, store.ErrSessionNotFound
	}
	p := &pendingCopy{db: db, info: store.CopyInfo{ID: db.newID(store.CopyPrefix), Session: session}, w: chunkWriter{raw: db.raw}}
	err := pgx.BeginTxFunc(ctx, db.pool, db.tx, func(tx pgx.Tx) (err error) {
		p.w.pk, err = insertCopy(ctx, tx, &p.info, true)
		return err
	})
	if err != nil {
		err = db.wrap("begin copy", err)
		db.saveFailed(ctx, session, 0, err)
		return nil, err
	}
	return p, nil
}

type pendingCopy struct {
	db   *DB
	info store.CopyInfo
	w    chunkWriter
	done bool
}

// touch renews the heartbeat of a pending copy and locks its row, or says
// it is gone.
func (p *pendingCopy) touch(ctx context.Context, tx pgx.Tx) error {
	tag, err := tx.Exec(ctx, "UPDATE copies SET last_read_at = clock_timestamp() WHERE pk = $1 AND pending", p.w.pk)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return errPendingGone
	}
	return nil
}

func (p *pendingCopy) Append(ctx context.Context, b []byte) error {
	if p.done {
		return errors.New("postgres: append to a copy already finished or aborted")
	}
	if len(b)%store.ChunkSize != 0 {
		return fmt.Errorf("postgres: append %d bytes: want a multiple of the chunk size, %d", len(b), store.ChunkSize)
	}
	if p.w.tally.Chunks == 0 {
		p.db.vac.waitBriefly(ctx) // before the first chunk, as SaveCopy does
	}
	w := p.w // on failure nothing of this append counts
	err := pgx.BeginTxFunc(ctx, p.db.pool, p.db.tx, func(tx pgx.Tx) error {
		if err := p.touch(ctx, tx); err != nil {
			return err
		}
		return w.copyFrom(ctx, tx, bytes.NewReader(b))
	})
	if err != nil {
		err = p.db.wrap("append to copy", err)
		p.failed(ctx, err)
		return err
	}
	p.w = w
	return nil
}

// failed hands the error of an Append or Finish to saveFailed; when that
// deleted the copy's rows (to give their space back), the copy is done.
func (p *pendingCopy) failed(ctx context.Context, err error) {
	if p.db.saveFailed(ctx, p.info.Session, p.w.pk, err) {
		p.done = true
	}
}

func (p *pendingCopy) Finish(ctx context.Context, meta store.CopyMeta, r io.Reader) (store.CopyInfo, error) {
	if p.done {
		return store.CopyInfo{}, errors.New("postgres: finish a copy already finished or aborted")
	}
	info := p.info
	info.Tool, info.Source, info.Complete = meta.Tool, meta.Source, meta.Complete
	info.OmittedBytes, info.OmittedLines = meta.OmittedBytes, meta.OmittedLines
	p.db.flushReads(ctx) // first, as SaveCopy does
	if p.w.tally.Chunks == 0 {
		p.db.vac.waitBriefly(ctx)
	}
	info, err := p.finish(ctx, info, r)
	if err != nil {
		p.failed(ctx, err)
		return store.CopyInfo{}, err
	}
	p.done = true
	return info, nil
}

// finish is Finish's transaction.
func (p *pendingCopy) finish(ctx context.Context, info store.CopyInfo, r io.Reader) (store.CopyInfo, error) {
	tx, err := p.db.pool.BeginTx(ctx, p.db.tx)
	if err != nil {
		return store.CopyInfo{}, p.db.wrap("save copy", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	if err := p.touch(ctx, tx); err != nil {
		return store.CopyInfo{}, p.db.wrap("save copy", err)
	}
	w := p.w
	if err := p.db.finishTx(ctx, tx, &w, r, &info); err != nil {
		return store.CopyInfo{}, err
	}
	return info, nil
}

func (p *pendingCopy) Abort(ctx context.Context) error {
	if p.done {
		return nil
	}
	p.done = true
	tag, err := p.db.exec(ctx, "DELETE FROM copies WHERE pk = $1 AND pending", p.w.pk)
	if err == nil && tag.RowsAffected() > 0 && p.w.tally.Chunks > 0 {
		p.db.vac.soon()
	}
	return p.db.wrap("abort copy", err)
}

// deleteAbandoned deletes pending copies idle for longer than
// store.StalePending: their writer crashed or was killed. A heartbeat more
// than StalePending in the future was written before the server's clock
// was set back: a live writer has written a later one since, so it is
// abandoned too (at worst its writer saves the copy whole).
func deleteAbandoned(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := pool.Exec(ctx, `DELETE FROM copies WHERE pending AND
	(last_read_at < clock_timestamp() - $1::interval OR last_read_at > clock_timestamp() + $1::interval)`,
		fmt.Sprintf("%d seconds", int64(store.StalePending/time.Second)))
	return err
}
