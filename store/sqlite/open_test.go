package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// rawDB opens the file at path with the SQLite driver alone, not this
// package, closed when the test ends.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

// rawPragma returns an integer pragma of the file at path, read without
// this package.
func rawPragma(t *testing.T, path, pragma string) int {
	t.Helper()
	raw := rawDB(t, path)
	defer raw.Close()
	var v int
	if err := raw.QueryRow("PRAGMA " + pragma).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// rawExec runs statements on the file at path without this package.
func rawExec(t *testing.T, path string, stmts ...string) {
	t.Helper()
	raw := rawDB(t, path)
	defer raw.Close()
	for _, s := range stmts {
		if _, err := raw.Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestNewerSchemaUntouched: a database from a newer scrollback is refused
// before anything is written to it: Open used to switch its auto-vacuum
// mode, rewriting the whole file with VACUUM, and only then find the
// version it could not read.
func TestNewerSchemaUntouched(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	open(t, path, nil).Close()
	// A newer release that keeps no incremental auto-vacuum.
	rawExec(t, path, "PRAGMA auto_vacuum = NONE", "VACUUM", "PRAGMA user_version = 99")
	_, err := sqlite.Open(path, nil)
	if !errors.Is(err, sqlite.ErrNewerSchema) {
		t.Fatalf("Open of a schema from the future: %v; want ErrNewerSchema", err)
	}
	if got := rawPragma(t, path, "auto_vacuum"); got != 0 {
		t.Errorf("Open of a newer database changed its auto_vacuum to %d", got)
	}
}

// TestForeignDatabaseRefused: an SQLite file of another program (a
// mistyped --db) is refused with an error naming the file and saying it
// is not scrollback's, and is left as it was: no scrollback tables added
// to it, no VACUUM.
func TestForeignDatabaseRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.db")
	rawExec(t, path, "CREATE TABLE notes (body TEXT)", "INSERT INTO notes VALUES ('keep me')")
	_, err := sqlite.Open(path, nil)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a scrollback database") ||
		!strings.Contains(err.Error(), "notes") {
		t.Fatalf("Open of another program's database: %v; want an error naming the file, its tables and saying it is not scrollback's", err)
	}
	if got := rawPragma(t, path, "auto_vacuum"); got != 0 {
		t.Errorf("Open of another program's database changed its auto_vacuum to %d", got)
	}
	raw := rawDB(t, path)
	var n int
	if err := raw.QueryRow("SELECT count(*) FROM sqlite_schema WHERE name != 'notes'").Scan(&n); err != nil || n != 0 {
		t.Errorf("Open added %d objects to another program's database (%v)", n, err)
	}
	_, err = sqlite.Open(path, &sqlite.Options{ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), "not a scrollback database") {
		t.Errorf("read-only Open of another program's database: %v", err)
	}
}

// TestOpenOldDatabaseOnFullDisk: a database made without incremental
// auto-vacuum (by an older release) is switched to it by a VACUUM on
// open, which needs as much free space again as the database. On a disk
// without that room the VACUUM used to fail the Open, and with it every
// command, until space was freed, although the database itself was fine:
// the switch is now left for a later open.
func TestOpenOldDatabaseOnFullDisk(t *testing.T) {
	small := smallFS(t, "3m")
	made := filepath.Join(t.TempDir(), "old.db")
	db := open(t, made, &sqlite.Options{RawChunks: true})
	sess, err := db.CreateSession(t.Context(), "me")
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 1800<<10)
	rand.NewChaCha8([32]byte{1}).Read(data)
	info, err := db.SaveCopy(t.Context(), sess.ID, store.CopyMeta{}, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	rawExec(t, made, "PRAGMA auto_vacuum = NONE", "VACUUM", "PRAGMA wal_checkpoint(TRUNCATE)")
	path := filepath.Join(small, "old.db")
	copyFile(t, made, path)
	if got := rawPragma(t, path, "auto_vacuum"); got != 0 {
		t.Fatalf("auto_vacuum = %d", got)
	}
	db, err = sqlite.Open(path, nil)
	if err != nil {
		t.Fatalf("Open of an old database on a disk without room for a VACUUM: %v", err)
	}
	defer db.Close()
	got := make([]byte, len(data))
	if n, err := db.ReadCopyAt(t.Context(), sess.ID, info.ID, got, 0); n != len(data) || err != nil && !errors.Is(err, io.EOF) || !bytes.Equal(got, data) {
		t.Errorf("reading the copy back: %d bytes, %v", n, err)
	}
	// The failed VACUUM left no room taken: a copy that fits is saved.
	if _, err := db.SaveCopy(t.Context(), sess.ID, store.CopyMeta{}, bytes.NewReader(data[:100<<10])); err != nil {
		t.Errorf("saving a copy that fits after the VACUUM failed: %v", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestNewDatabaseOwnerOnly: a new database, its write-ahead log and its
// shared-memory index are readable by their owner only, whatever the
// umask lets through: the copies are command output, secrets included.
// A database that exists keeps its mode.
func TestNewDatabaseOwnerOnly(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no Unix file modes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "new", "scrollback.db")
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateSession(context.Background(), "local"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s: mode %v, want -rw-------", filepath.Base(p), m)
		}
	}
	old := filepath.Join(dir, "old.db")
	if err := os.WriteFile(old, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	os.Chmod(old, 0o640) // past the umask
	db2, err := sqlite.Open(old, nil)
	if err != nil {
		t.Fatal(err)
	}
	db2.Close()
	if fi, err := os.Stat(old); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("an existing database's mode changed: %v, %v", fi.Mode(), err)
	}
}
