package sqlite_test

import (
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// rawPragma returns an integer pragma of the file at path, read without
// this package.
func rawPragma(t *testing.T, path, pragma string) int {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
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
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
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
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int
	if err := raw.QueryRow("SELECT count(*) FROM sqlite_schema WHERE name != 'notes'").Scan(&n); err != nil || n != 0 {
		t.Errorf("Open added %d objects to another program's database (%v)", n, err)
	}
	_, err = sqlite.Open(path, &sqlite.Options{ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), "not a scrollback database") {
		t.Errorf("read-only Open of another program's database: %v", err)
	}
}
