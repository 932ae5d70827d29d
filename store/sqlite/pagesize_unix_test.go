//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlite_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// TestPageSize: a new database on a file system of a gigabyte or more
// gets 64 KiB pages (sqlite.PageSize), in WAL mode with incremental
// auto-vacuum; one on a small file system, and one made before, keep
// 4 KiB pages.
func TestPageSize(t *testing.T) {
	pragmas := func(path string) (size int, mode string, vacuum int) {
		t.Helper()
		raw, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if err := raw.QueryRow(`SELECT page_size, journal_mode, auto_vacuum FROM pragma_page_size(), pragma_journal_mode(), pragma_auto_vacuum()`).Scan(&size, &mode, &vacuum); err != nil {
			t.Fatal(err)
		}
		return size, mode, vacuum
	}
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || int64(st.Blocks)*int64(st.Bsize) < 1<<30 {
		t.Skipf("%s is on a file system under 1 GiB (or unknown: %v)", dir, err)
	}
	path := filepath.Join(dir, "new.db")
	db := open(t, path, nil)
	db.Close()
	if size, mode, vacuum := pragmas(path); size != sqlite.PageSize || mode != "wal" || vacuum != 2 {
		t.Errorf("new database: page size %d, %s mode, auto_vacuum %d; want %d, wal, 2 (incremental)", size, mode, vacuum, sqlite.PageSize)
	}
	src, err := os.ReadFile("testdata/v1.db")
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, "v1.db")
	os.WriteFile(old, src, 0o600)
	db = open(t, old, nil)
	db.Close()
	if size, mode, _ := pragmas(old); size != 4096 || mode != "wal" {
		t.Errorf("database of an earlier release: page size %d, %s mode; want 4096, wal", size, mode)
	}
}
