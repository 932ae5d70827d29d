package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// holdWriteLock takes the write lock of the database at path, as another
// process would, until the returned release is called (more than once is
// fine).
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := raw.Conn(t.Context())
	if err != nil {
		raw.Close()
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		conn.Close()
		raw.Close()
		t.Fatal(err)
	}
	return sync.OnceFunc(func() {
		conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		raw.Close()
	})
}

// TestSaveWhileLocked: a save that finds another process holding the write
// lock past the busy timeout fails with ErrBusy (store.ErrBusy, so the
// engine knows not to retry) after one wait. It used to then try to write
// the failure down, waiting for the same lock as long again before
// returning; the failure is now written down by Close, and Stats know of
// it meanwhile.
func TestSaveWhileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.db")
	db := open(t, path, &sqlite.Options{BusyTimeout: 100 * time.Millisecond})
	sess, err := db.CreateSession(t.Context(), "me")
	if err != nil {
		t.Fatal(err)
	}
	release := holdWriteLock(t, path)
	defer release()
	var mu sync.Mutex
	var ops []string
	defer sqlite.OnWrite(func(op string) {
		mu.Lock()
		ops = append(ops, op)
		mu.Unlock()
	})()
	_, err = db.SaveCopy(t.Context(), sess.ID, store.CopyMeta{}, strings.NewReader("x\n"))
	if !errors.Is(err, sqlite.ErrBusy) || !errors.Is(err, store.ErrBusy) || !errors.Is(err, store.ErrUnavailable) ||
		!strings.Contains(err.Error(), "database is locked") || !strings.Contains(err.Error(), path) {
		t.Fatalf("SaveCopy while another connection holds the write lock: %v; want ErrBusy naming the file", err)
	}
	mu.Lock()
	if want := []string{"save copy"}; !slices.Equal(ops, want) {
		t.Errorf("write transactions begun by the save = %q, want %q: each waits for the lock", ops, want)
	}
	mu.Unlock()
	st, err := db.Stats(t.Context(), "")
	if err != nil || st.LastSaveFailure == nil || !strings.Contains(st.LastSaveFailure.Error, "database is locked") {
		t.Errorf("Stats after the failed save: %+v, %v; want the failure", st.LastSaveFailure, err)
	}
	release()
	db.Close()
	db = open(t, path, nil)
	if st, err := db.Stats(t.Context(), ""); err != nil || st.LastSaveFailure == nil {
		t.Errorf("after Close, another open's Stats do not know of the failed save: %+v, %v", st.LastSaveFailure, err)
	}
}
