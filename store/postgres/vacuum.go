package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// vacuumer makes the space of deleted rows reusable soon after they are
// deleted, instead of when autovacuum next looks (a minute or more later,
// and only past its thresholds): PostgreSQL keeps a deleted row's space
// until a VACUUM has seen that no transaction can still read it, and a
// database under a quota deletes about as much as it saves, so without it
// the files grow by everything saved since the last autovacuum.
//
// A request (soon) starts one VACUUM in the background, on a connection
// of the pool, outside any transaction; requests made while it runs
// coalesce into one more run after it (a VACUUM reclaims only what was
// deleted before it started). Only a save waits for it, briefly (see
// waitBriefly); its errors are counted and handed to onError, never
// returned to a caller. Close cancels a run under way and waits for it.
type vacuumer struct {
	run func(ctx context.Context) error // one VACUUM; set by Open

	mu      sync.Mutex
	running bool // a goroutine is running or about to run a VACUUM
	again   bool // a request came after the running VACUUM started
	closed  bool
	drain   bool // Close waits for the VACUUM (see urgent)
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	stats   VacuumStats
	onError func(error)
	idle    *sync.Cond // broadcast whenever running turns false
}

// VacuumStats says how the background VACUUMs of a DB went.
type VacuumStats struct {
	Runs      int64 // VACUUMs finished without error
	Failures  int64 // VACUUMs that failed (cancelled by Close ones excepted)
	LastError error // the last failure's error, or nil
	// Blocked says why no background VACUUM runs ("" when they do): the
	// URL's user may not VACUUM the chunks (see VacuumBlocked).
	Blocked string
}

func (v *vacuumer) init(run func(ctx context.Context) error) {
	v.run = run
	v.ctx, v.cancel = context.WithCancel(context.Background())
	v.idle = sync.NewCond(&v.mu)
}

// block keeps every VACUUM from running, for the reason given ("": they
// run).
func (v *vacuumer) block(reason string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.stats.Blocked = reason
}

// soon asks for a VACUUM: started now when none runs, else once more after
// the one running.
func (v *vacuumer) soon() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed || v.run == nil || v.stats.Blocked != "" {
		return
	}
	if v.running {
		v.again = true
		return
	}
	v.running = true
	v.wg.Add(1)
	go v.loop()
}

// urgent asks for a VACUUM as soon does, one that close waits for (up
// to vacuumDrain) before it cancels what is left: after a save failed for
// lack of space, the next save, maybe the next process's (a CLI's next
// command), fits only once a VACUUM has made the failed rows' space
// reusable.
func (v *vacuumer) urgent() {
	v.mu.Lock()
	v.drain = true
	v.mu.Unlock()
	v.soon()
}

// vacuumDrain bounds how long close waits for an urgent VACUUM.
const vacuumDrain = 10 * time.Second

func (v *vacuumer) loop() {
	defer v.wg.Done()
	for {
		err := v.run(v.ctx)
		v.mu.Lock()
		var report func(error)
		switch {
		case err == nil:
			v.stats.Runs++
		case v.ctx.Err() == nil:
			v.stats.Failures++
			v.stats.LastError = err
			report = v.onError
		}
		if !v.again || v.closed {
			v.running, v.again = false, false
			v.idle.Broadcast()
			v.mu.Unlock()
			if report != nil {
				report(err)
			}
			return
		}
		v.again = false
		v.mu.Unlock()
		if report != nil {
			report(err)
		}
	}
}

// vacuumPatience is how long a save waits for a VACUUM under way before
// it writes (see waitBriefly).
const vacuumPatience = 250 * time.Millisecond

// waitBriefly waits, at most vacuumPatience, for a VACUUM under way. A save
// calls it before writing its chunks: the VACUUM is making the space of
// the copies an earlier save evicted reusable, and a save that writes
// before it ends takes new pages for what the evicted ones would hold,
// so that a session saving back to back under its quota grows the files
// by a save or two beyond the quota. Without a VACUUM running it returns
// at once; past its patience the save goes on, and only the file grows.
func (v *vacuumer) waitBriefly(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, vacuumPatience)
	defer cancel()
	v.wait(ctx)
}

// wait returns once no VACUUM runs or is due, or ctx ends.
func (v *vacuumer) wait(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		v.mu.Lock()
		v.idle.Broadcast()
		v.mu.Unlock()
	})
	defer stop()
	v.mu.Lock()
	defer v.mu.Unlock()
	for v.running && ctx.Err() == nil {
		v.idle.Wait()
	}
	return ctx.Err()
}

// close cancels a VACUUM under way (after waiting for it, up to
// vacuumDrain, when one was urgent) and waits for it; later requests do
// nothing.
func (v *vacuumer) close() {
	v.mu.Lock()
	drain := v.drain
	v.mu.Unlock()
	if drain {
		ctx, cancel := context.WithTimeout(context.Background(), vacuumDrain)
		v.wait(ctx)
		cancel()
	}
	v.mu.Lock()
	v.closed = true
	v.mu.Unlock()
	if v.cancel != nil {
		v.cancel()
	}
	v.wg.Wait()
}

// toastQuery names the chunks' TOAST table, which holds their bytes.
const toastQuery = "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'chunks'::regclass"

// vacuum runs one VACUUM of the chunks' TOAST table, where evictions and
// deletions leave nearly all of their dead bytes, on a connection of the
// pool. The rest (the chunks' and copies' rows, a few dozen bytes per 64
// KiB) is left to autovacuum: vacuuming it too made each run slower, and
// so the space later to come back. With no arguments pgx sends VACUUM in
// the simple protocol, as one statement and so outside any transaction
// block, as VACUUM requires. The table is looked up each time: rewriting
// the chunks (VACUUM FULL, say) gives them a new one.
//
// INDEX_CLEANUP ON: by default (AUTO) a VACUUM that finds dead rows on
// fewer than 2% of a table's pages skips its indexes, and then leaves
// those pages out of the free space map, so that one eviction's space
// (a few hundred TOAST pages of a large table) would be reused only once
// several had piled up. TRUNCATE false: giving empty pages at the end back
// to the file system takes a lock that saves would wait for; autovacuum
// still does it. (Both options need PostgreSQL 12 or later, as pgx does.)
func (db *DB) vacuum(ctx context.Context) error {
	var toast string
	if err := db.pool.QueryRow(ctx, toastQuery).Scan(&toast); err != nil {
		return err
	}
	_, err := db.pool.Exec(ctx, "VACUUM (INDEX_CLEANUP ON, TRUNCATE false) "+toast)
	return err
}

// VacuumStats returns how the background VACUUMs went so far (see
// SetVacuumErrorLog).
func (db *DB) VacuumStats() VacuumStats {
	db.vac.mu.Lock()
	defer db.vac.mu.Unlock()
	return db.vac.stats
}

// SetVacuumErrorLog sets a function that receives the error of each
// background VACUUM that fails; nil (the default) only counts them (see
// VacuumStats). Call it before sharing the DB between goroutines.
//
// After a save that evicted copies, or a deletion of sessions or copies,
// the DB runs VACUUM on the chunks' TOAST table in the background, so
// that the space of the deleted rows is reused by the next saves: the
// database then stays near what its quotas allow instead of growing until
// autovacuum comes by. Saves never wait for it, and at most one runs per
// DB at a time.
func (db *DB) SetVacuumErrorLog(log func(error)) {
	db.vac.mu.Lock()
	db.vac.onError = log
	db.vac.mu.Unlock()
}

// VacuumBlocked says why the background VACUUM cannot run, "" when it can.
// PostgreSQL lets only a table's owner (a member of the owning role, a
// superuser, or from PostgreSQL 17 a role with the MAINTAIN privilege on
// it) VACUUM a table; anyone else's VACUUM skips it with a warning and
// reclaims nothing. Then evicted and deleted space comes back only when
// autovacuum runs, and the database grows past its caps in between. The
// check is made once, when the database is opened.
func (db *DB) VacuumBlocked() string { return db.VacuumStats().Blocked }

// vacuumBlocked asks the server whether the connected user may VACUUM the
// chunks, and says why not.
func vacuumBlocked(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	var (
		user, owner string
		may         bool
		version     int
	)
	err := pool.QueryRow(ctx, `SELECT current_user, pg_get_userbyid(c.relowner),
	r.rolsuper OR pg_has_role(current_user, c.relowner, 'USAGE'),
	current_setting('server_version_num')::int
FROM pg_class c, pg_roles r WHERE c.oid = 'chunks'::regclass AND r.rolname = current_user`).Scan(&user, &owner, &may, &version)
	if err != nil {
		return "", err
	}
	if !may && version >= 170000 {
		// MAINTAIN is a privilege only from PostgreSQL 17 on: older
		// servers reject its name, so it is asked about only there.
		if err := pool.QueryRow(ctx, `SELECT has_table_privilege('chunks', 'MAINTAIN')`).Scan(&may); err != nil {
			return "", err
		}
	}
	if may {
		return "", nil
	}
	return fmt.Sprintf("the database user %q does not own the table chunks (its owner is %q), and only the owner may VACUUM it: "+
		"evicted and deleted space comes back only when autovacuum runs. Connect as %q, or run ALTER TABLE chunks OWNER TO %s "+
		"(or, on PostgreSQL 17 and later, GRANT MAINTAIN ON chunks TO %s) and restart", user, owner, owner, quoteIdent(user), quoteIdent(user)), nil
}

// quoteIdent quotes a role's name as SQL wants it in a statement.
func quoteIdent(name string) string {
	return pgx.Identifier{name}.Sanitize()
}
