package postgres

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/scrollback-dev/scrollback/store"
)

// settle waits for the DB's background VACUUM to be done, with a generous
// bound: the test checks sizes only once the VACUUM it relies on has run.
func settle(t *testing.T, db *DB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := db.vac.wait(ctx); err != nil {
		t.Fatalf("the background VACUUM did not finish within a minute: %v", err)
	}
	if st := db.VacuumStats(); st.Failures > 0 {
		t.Fatalf("background VACUUM failed: %+v", st)
	}
}

// Space freed by evictions and deletions is reused by later saves: 60
// copies of 256 KiB (incompressible, so stored as they are) go through a
// 2 MiB session quota, and the chunks table with its TOAST and indexes
// stays within twice the quota. Without the background VACUUM every byte
// saved stays on disk (15 MiB) until autovacuum comes by.
func TestEvictedSpaceReused(t *testing.T) {
	const (
		quota = 2 << 20
		size  = 256 << 10
		saves = 60
		bound = 2 * quota
	)
	for _, tc := range []struct {
		name string
		// save saves one copy into the DB and frees what it must: by
		// eviction under the quota, or by deleting the session.
		save func(t *testing.T, db *DB, i int)
	}{
		{"eviction", func(t *testing.T, db *DB, i int) {
			s, err := db.DefaultSession(t.Context(), "alice")
			if err != nil {
				t.Fatal(err)
			}
			saveRandom(t, db, s.ID, i, size)
		}},
		{"deleted session", func(t *testing.T, db *DB, i int) {
			// Eight copies per session, then the session goes.
			s, err := db.DefaultSession(t.Context(), "alice")
			if err != nil {
				t.Fatal(err)
			}
			saveRandom(t, db, s.ID, i, size)
			if i%8 == 7 {
				if err := db.DeleteSession(t.Context(), "alice", s.ID); err != nil {
					t.Fatal(err)
				}
			}
		}},
		{"retention", func(t *testing.T, db *DB, i int) {
			s, err := db.CreateSession(t.Context(), "alice")
			if err != nil {
				t.Fatal(err)
			}
			saveRandom(t, db, s.ID, i, size)
			if i%8 == 7 {
				if n, err := db.DeleteIdle(t.Context(), time.Now().Add(time.Hour)); err != nil || n.Sessions != 8 {
					t.Fatalf("DeleteIdle = %+v, %v; want 8 sessions", n, err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t, newDatabase(t))
			db.SetLimits(store.Limits{SessionQuota: quota})
			// What is measured is the DB's own VACUUM, so autovacuum is
			// kept out. Once, in the whole suite on a busy machine, the
			// retention case peaked at two rounds' worth; the likely
			// cause (not reproduced) is an autovacuum ANALYZE of the
			// chunks overlapping the DB's VACUUM, holding a snapshot and
			// pinning pages so that run freed nothing.
			if _, err := db.pool.Exec(t.Context(), "ALTER TABLE chunks SET (autovacuum_enabled = off, toast.autovacuum_enabled = off)"); err != nil {
				t.Fatal(err)
			}
			var peak int64
			for i := range saves {
				tc.save(t, db, i)
				settle(t, db)
				peak = max(peak, count(t, db, "SELECT pg_total_relation_size('chunks')"))
			}
			if peak > bound {
				t.Errorf("chunks took up to %d bytes after %d saves of %d; want at most %d (twice the %d quota): freed space is not reused",
					peak, saves, size, bound, quota)
			}
			if got := db.VacuumStats().Runs; got == 0 {
				t.Errorf("no background VACUUM ran")
			}
		})
	}
}

// saveRandom saves n random bytes (seeded by i), which do not compress.
func saveRandom(t *testing.T, db *DB, session string, i, n int) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(i), 2))
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(r.Uint32())
	}
	if _, err := db.SaveCopy(t.Context(), session, store.CopyMeta{}, bytes.NewReader(b)); err != nil {
		t.Fatal(err)
	}
}

// The vacuumer coalesces: requests made while a VACUUM runs bring exactly
// one more run; a failure is counted and reported, never returned; close
// cancels the run under way and waits for it, and later requests do
// nothing.
func TestVacuumerCoalesces(t *testing.T) {
	var v vacuumer
	started := make(chan struct{})
	release := make(chan error)
	var runs atomic.Int64
	v.init(func(ctx context.Context) error {
		runs.Add(1)
		started <- struct{}{}
		select {
		case err := <-release:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	var mu sync.Mutex
	var logged []error
	v.onError = func(err error) { mu.Lock(); logged = append(logged, err); mu.Unlock() }

	v.soon()
	<-started
	for range 5 {
		v.soon() // while the first runs: one more run, not five
	}
	boom := errors.New("boom")
	release <- boom
	<-started
	release <- nil
	if err := v.wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := runs.Load(); got != 2 {
		t.Errorf("%d runs, want 2 (the first and one for the requests made during it)", got)
	}
	st := v.stats
	if st.Runs != 1 || st.Failures != 1 || !errors.Is(st.LastError, boom) {
		t.Errorf("stats = %+v, want 1 run, 1 failure, last error boom", st)
	}
	mu.Lock()
	if len(logged) != 1 || !errors.Is(logged[0], boom) {
		t.Errorf("logged %v, want [boom]", logged)
	}
	mu.Unlock()

	v.soon() // a third run, cancelled by close
	<-started
	v.close()
	v.soon()
	if got := runs.Load(); got != 3 {
		t.Errorf("%d runs after close, want 3", got)
	}
	if v.stats.Failures != 1 {
		t.Errorf("a run cancelled by close counted as a failure: %+v", v.stats)
	}
}

// Schema version 3 has autovacuum of the chunks, and of their TOAST
// table, run unthrottled.
func TestChunksAutovacuumUnthrottled(t *testing.T) {
	db := openTest(t, newDatabase(t))
	for _, rel := range []string{"'chunks'::regclass", "(SELECT reltoastrelid FROM pg_class WHERE oid = 'chunks'::regclass)"} {
		var opts []string
		if err := db.pool.QueryRow(t.Context(), "SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = "+rel).Scan(&opts); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(opts, "autovacuum_vacuum_cost_delay=0") {
			t.Errorf("%s: reloptions %q, want autovacuum_vacuum_cost_delay=0", rel, opts)
		}
	}
}

// TestVacuumWaitBriefly: a save waits for a VACUUM under way, so that it
// writes into the space the VACUUM frees, but never longer than
// vacuumPatience; with none running it does not wait. (Time is the
// bubble's: the durations are exact.)
func TestVacuumWaitBriefly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var v vacuumer
		v.init(func(ctx context.Context) error {
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		defer v.close()

		start := time.Now()
		v.waitBriefly(t.Context())
		if d := time.Since(start); d != 0 {
			t.Errorf("no VACUUM running: waited %v, want 0", d)
		}

		v.soon()
		go func() {
			time.Sleep(vacuumPatience / 2)
			release <- struct{}{}
		}()
		start = time.Now()
		v.waitBriefly(t.Context())
		if d := time.Since(start); d != vacuumPatience/2 {
			t.Errorf("a VACUUM ending after %v: waited %v, want until it ended", vacuumPatience/2, d)
		}

		v.soon() // this one never ends by itself
		start = time.Now()
		v.waitBriefly(t.Context())
		if d := time.Since(start); d != vacuumPatience {
			t.Errorf("a VACUUM outlasting the patience: waited %v, want %v", d, vacuumPatience)
		}
	})
}

// TestVacuumUrgentDrains: close cancels an ordinary VACUUM at once, but
// waits for an urgent one (after a save failed for lack of space) to
// end, at most vacuumDrain, and cancels it only then.
func TestVacuumUrgentDrains(t *testing.T) {
	for _, c := range []struct {
		name   string
		urgent bool
		ends   time.Duration // when the VACUUM ends by itself; 0: never
		want   time.Duration // how long close takes
	}{
		{"ordinary", false, time.Second, 0},
		{"urgent, ends soon", true, time.Second, time.Second},
		{"urgent, never ends", true, 0, vacuumDrain},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var v vacuumer
				cancelled := false
				v.init(func(ctx context.Context) error {
					var end <-chan time.Time
					if c.ends > 0 {
						end = time.After(c.ends)
					}
					select {
					case <-end:
						return nil
					case <-ctx.Done():
						cancelled = true
						return ctx.Err()
					}
				})
				if c.urgent {
					v.urgent()
				} else {
					v.soon()
				}
				synctest.Wait()
				start := time.Now()
				v.close()
				if d := time.Since(start); d != c.want {
					t.Errorf("close took %v, want %v", d, c.want)
				}
				if wantCancel := !c.urgent || c.ends == 0; cancelled != wantCancel {
					t.Errorf("cancelled = %v, want %v", cancelled, wantCancel)
				}
			})
		})
	}
}

// TestVacuumBlockedForNonOwner: a user who does not own the chunks (and
// so cannot VACUUM them: PostgreSQL would skip the table with a warning)
// is told so, with the statement that mends it, and no VACUUM is sent;
// the owner is told nothing.
func TestVacuumBlockedForNonOwner(t *testing.T) {
	u := newDatabase(t)
	owner := openTest(t, u) // migrates: the server's admin user owns the tables
	if got := owner.VacuumBlocked(); got != "" {
		t.Fatalf("the owner is blocked: %s", got)
	}

	role := "scrollback_nonowner_" + store.NewID("r")[2:10]
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + role,
		"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO " + role,
	} {
		if _, err := owner.pool.Exec(t.Context(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		owner.pool.Exec(context.Background(), "REASSIGN OWNED BY "+role+" TO CURRENT_USER")
		owner.pool.Exec(context.Background(), "DROP OWNED BY "+role)
		owner.pool.Exec(context.Background(), "DROP ROLE IF EXISTS "+role)
	})
	nu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	nu.User = url.User(role)
	db := openTest(t, nu.String())
	got := db.VacuumBlocked()
	for _, want := range []string{role, "does not own the table chunks", "ALTER TABLE chunks OWNER TO " + `"` + role + `"`} {
		if !strings.Contains(got, want) {
			t.Errorf("VacuumBlocked() = %q, want it to say %q", got, want)
		}
	}
	db.vac.soon()
	if err := db.vac.wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if st := db.VacuumStats(); st.Runs != 0 || st.Failures != 0 || st.Blocked != got {
		t.Errorf("a blocked DB ran a VACUUM: %+v", st)
	}
}
