//go:build unix

package cli

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// TestRunAppliesRetention: a user who only runs `scrollback run` gets
// retention too (it used to run only in the servers and gc). After its
// command, run deletes the sessions unused for longer than the retention
// period, not the recent ones nor its own, at most once a day per
// database (a second run within the day does not scan again), and not at
// all with SCROLLBACK_RETENTION=0.
func TestRunAppliesRetention(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	env := map[string]string{}
	run := func(args ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		io := IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }}
		if code := Main(context.Background(), append([]string{"run", "--db", path}, args...), io); code != 0 || stderr.Len() > 0 {
			t.Fatalf("run %q: exit %d, stderr %q", args, code, stderr.String())
		}
	}
	// The sessions, made and aged with the database closed between runs.
	withDB := func(f func(st *sqlite.DB, raw *sql.DB)) {
		t.Helper()
		st, err := sqlite.Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		raw, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		f(st, raw)
	}
	newSession := func() (id string) {
		withDB(func(st *sqlite.DB, _ *sql.DB) {
			s, err := st.CreateSession(t.Context(), scrollback.LocalOwner)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.SaveCopy(t.Context(), s.ID, store.CopyMeta{Tool: "test"}, strings.NewReader("old output\n")); err != nil {
				t.Fatal(err)
			}
			id = s.ID
		})
		return id
	}
	age := func(id string, by time.Duration) { ageSessions(t, path, by, id) }
	// a day passes, for the claim of the latest pass.
	dayPasses := func() {
		withDB(func(_ *sqlite.DB, raw *sql.DB) {
			if _, err := raw.Exec(`UPDATE counters SET value = value - ? WHERE name = 'retention_claimed_at'`, int64(25*time.Hour)); err != nil {
				t.Fatal(err)
			}
		})
	}
	exists := func(id string) bool {
		t.Helper()
		var ok bool
		withDB(func(st *sqlite.DB, _ *sql.DB) {
			_, err := st.GetSession(t.Context(), scrollback.LocalOwner, id)
			if err != nil && !errors.Is(err, store.ErrSessionNotFound) {
				t.Fatal(err)
			}
			ok = err == nil
		})
		return ok
	}

	old, recent := newSession(), newSession()
	age(old, 31*24*time.Hour)
	age(recent, 29*24*time.Hour)
	run("--", "true")
	if exists(old) {
		t.Errorf("a session unused for 31 days is still there after run (retention 30d)")
	}
	if !exists(recent) {
		t.Fatalf("a session unused for 29 days was deleted (retention 30d)")
	}

	// Within the day, no second pass.
	age(recent, 31*24*time.Hour)
	run("--", "true")
	if !exists(recent) {
		t.Errorf("a second run within the day deleted a session: it scanned again")
	}

	// A day later, a pass; it spares the session run itself used.
	dayPasses()
	own := newSession()
	age(own, 31*24*time.Hour)
	run("--session", own, "--", "true")
	if exists(recent) {
		t.Errorf("a run a day later did not delete a session unused for 31 days")
	}
	if !exists(own) {
		t.Errorf("the pass deleted the session its own run used")
	}

	// SCROLLBACK_RETENTION=0 keeps sessions, and --retention wins over it.
	dayPasses()
	age(own, 31*24*time.Hour)
	env["SCROLLBACK_RETENTION"] = "0"
	run("--", "true")
	if !exists(own) {
		t.Errorf("SCROLLBACK_RETENTION=0: a session was deleted")
	}
	run("--retention", "30d", "--", "true")
	if exists(own) {
		t.Errorf("--retention 30d over SCROLLBACK_RETENTION=0: a session unused for 31 days is still there")
	}
}

// retainAfter scans (DeleteIdle) at most once per interval, marks the
// command's session used before it, and gives up on a pass at its
// timeout (in fake time) rather than hold up the command; the pass that
// ran out of time still counts as the interval's.
func TestRetainAfterOncePerInterval(t *testing.T) {
	warmEncoder(t)
	synctest.Test(t, func(t *testing.T) {
		db, err := sqlite.Open(filepath.Join(t.TempDir(), "r.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		c := &countingStore{DB: db, hold: make(chan struct{})} // every pass waits
		_, err = retainAfter(t.Context(), c, store.DefaultRetention, []string{"s_mine"})
		if !errors.Is(err, context.DeadlineExceeded) || c.passes.Load() != 1 || c.markCalls() != 1 {
			t.Fatalf("a held pass: err %v, %d passes, %d marks; want its timeout, 1 pass after 1 mark", err, c.passes.Load(), c.markCalls())
		}
		close(c.hold)
		for _, step := range []struct {
			wait   time.Duration
			period time.Duration
			want   int64
		}{
			{time.Hour, store.DefaultRetention, 1},
			{22 * time.Hour, store.DefaultRetention, 1},
			{2 * time.Hour, store.DefaultRetention, 2}, // a day after the first
			{time.Hour, 0, 2},                          // retention off
			{25 * time.Hour, 0, 2},
			{0, store.DefaultRetention, 3},
			{0, store.DefaultRetention, 3},
		} {
			time.Sleep(step.wait)
			if _, err := retainAfter(t.Context(), c, step.period, nil); err != nil {
				t.Fatal(err)
			}
			if n := c.passes.Load(); n != step.want {
				t.Fatalf("after %v more, retention %v: %d passes, want %d", step.wait, step.period, n, step.want)
			}
		}
	})
}
