//go:build linux

package postgres

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/internal/sample"
)

// fullTablespace moves db's chunks (and their TOAST table, where the
// bytes are) into a tablespace on a fresh tmpfs of size bytes, to be
// filled; both go when the test ends. It skips the test, saying why,
// where it cannot: not root on Linux, a server on another machine (its
// data directory is not here), a user that may not create tablespaces.
func fullTablespace(t *testing.T, db *DB, size string) {
	t.Helper()
	if testing.Short() {
		t.Skip("mounts a file system")
	}
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skipf("needs root on Linux to mount a small tmpfs for a tablespace (%s, uid %d); skipping the full-disk test", runtime.GOOS, os.Geteuid())
	}
	ctx := t.Context()
	var data string
	if err := db.pool.QueryRow(ctx, "SHOW data_directory").Scan(&data); err != nil {
		t.Skipf("cannot ask the server for its data directory (%v); skipping the full-disk test", err)
	}
	fi, err := os.Stat(data)
	if err != nil {
		t.Skipf("the server's data directory %s is not on this machine (%v); skipping the full-disk test", data, err)
	}
	owner := fi.Sys().(*syscall.Stat_t)
	dir, err := os.MkdirTemp("", "scrollback-full-")
	if err != nil {
		t.Fatal(err)
	}
	opts := fmt.Sprintf("size=%s,uid=%d,gid=%d,mode=0700", size, owner.Uid, owner.Gid)
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput(); err != nil {
		os.Remove(dir)
		t.Skipf("cannot mount a %s tmpfs (%v: %s); skipping the full-disk test", size, err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		// The server's backends may keep a dropped table's files open for a
		// moment ("target is busy"): retry, then detach it lazily, which
		// frees it once they let go.
		var out []byte
		for try := 0; try < 10; try++ {
			if out, err = exec.Command("umount", dir).CombinedOutput(); err == nil {
				os.Remove(dir)
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
		if lout, lerr := exec.Command("umount", "-l", dir).CombinedOutput(); lerr != nil {
			t.Errorf("umount %s: %v: %s; umount -l: %v: %s", dir, err, out, lerr, lout)
			return
		}
		os.Remove(dir)
	})
	var b [6]byte
	crand.Read(b[:])
	ts := "scrollback_full_" + hex.EncodeToString(b[:])
	if _, err := db.pool.Exec(ctx, "CREATE TABLESPACE "+ts+" LOCATION '"+dir+"'"); err != nil {
		t.Skipf("cannot create a tablespace in %s (%v); skipping the full-disk test", dir, err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if _, err := db.pool.Exec(ctx, "ALTER TABLE chunks SET TABLESPACE pg_default"); err != nil {
			t.Errorf("move the chunks back: %v", err)
		}
		if _, err := db.pool.Exec(ctx, "DROP TABLESPACE "+ts); err != nil {
			t.Errorf("drop tablespace %s: %v", ts, err)
		}
	})
	if _, err := db.pool.Exec(ctx, "ALTER TABLE chunks SET TABLESPACE "+ts); err != nil {
		t.Fatal(err)
	}
}

// TestDiskFull fills the 3 MiB file system the chunks live on: a save
// too large for it fails with ErrFull; the copy saved before still reads;
// and the failed save gives its space back (the pending copy's committed
// rows deleted, a VACUUM making the space of every row it wrote reusable),
// so that the next save that fits succeeds. Without the VACUUM that save
// took new pages of the full disk and failed too. Whole and streamed
// saves, several times over.
func TestDiskFull(t *testing.T) {
	u := newDatabase(t)
	db := openTest(t, u)
	fullTablespace(t, db, "3m")
	ctx := t.Context()
	big := make([]byte, 8<<20)
	rand.NewChaCha8([32]byte{3}).Read(big) // stored raw: it cannot fit
	fits := sample.Seq(108_894)            // seq 1 20000
	sess := mustSession(t, db, "me")
	small, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, strings.NewReader("fits"))
	if err != nil {
		t.Fatal(err)
	}
	// A database in use has had copies deleted and its chunks vacuumed
	// (after evictions, by the background VACUUM; else by autovacuum),
	// which makes the free space maps and the visibility map of their
	// TOAST table and its index. A VACUUM on a full disk fills in those
	// maps but cannot make them: on a database new to a full disk only
	// deleting what it holds helps.
	for range 3 {
		old, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(sample.Letters(1, 2<<20)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.pool.Exec(ctx, "DELETE FROM copies WHERE id = $1", old.ID); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			db.vac.soon()
			db.vac.wait(ctx)
		}
	}
	for i := range 6 {
		// Each failed save is a process of its own, as a CLI command is:
		// it ends (Close) right after the failure, and the next save is
		// another process's.
		failing, err := Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		streamed := i%2 == 1
		if streamed {
			p, err := failing.BeginCopy(ctx, sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; ; off += store.ChunkSize {
				if off == len(big) {
					t.Fatal("8 MiB appended to a 3 MiB file system")
				}
				if err = p.Append(ctx, big[off:off+store.ChunkSize]); err != nil {
					break
				}
			}
			checkFull(t, err, "append to copy")
			if n := count(t, failing, "SELECT count(*) FROM copies WHERE pending"); n != 0 {
				t.Errorf("%d: %d pending copies after the failed append, want its rows deleted", i, n)
			}
			if err := p.Abort(ctx); err != nil {
				t.Errorf("%d: Abort after the failed append: %v", i, err)
			}
		} else {
			_, err := failing.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(big))
			checkFull(t, err, "save copy")
		}
		failing.Close()
		if st := failing.VacuumStats(); st.Runs == 0 || st.Failures != 0 {
			t.Errorf("%d: the failed save's VACUUMs: %+v; want one run, and finished before Close returned", i, st)
		}

		next := openTest(t, u)
		p := make([]byte, 4)
		if n, err := next.ReadCopyAt(ctx, sess.ID, small.ID, p, 0); n != 4 || string(p) != "fits" {
			t.Errorf("%d: the copy saved before reads %q, %v", i, p[:n], err)
		}
		info, err := next.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(fits))
		if err != nil {
			t.Fatalf("%d (streamed %v): seq 1 20000 after the failed save: %v", i, streamed, err)
		}
		got := make([]byte, len(fits))
		if n, err := next.ReadCopyAt(ctx, sess.ID, info.ID, got, 0); n != len(fits) || !bytes.Equal(got, fits) {
			t.Errorf("%d: seq 1 20000 reads back %d bytes, %v", i, n, err)
		}
		st, err := next.Stats(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if f := st.LastSaveFailure; f == nil || !f.Full || f.Session != sess.ID || time.Since(f.At) > time.Minute ||
			!strings.Contains(f.Error, "No space left on device") {
			t.Errorf("%d: Stats.LastSaveFailure = %+v; want the failed save, for lack of space", i, f)
		}
		if st.FreeBytes != nil || st.DiskFreeBytes != nil {
			t.Errorf("%d: Stats say %v free, %v on disk; PostgreSQL does not know", i, st.FreeBytes, st.DiskFreeBytes)
		}
		// Delete what fit, for the next round.
		if err := next.DeleteSession(ctx, "me", sess.ID); err != nil {
			t.Fatal(err)
		}
		next.vac.wait(ctx)
		sess = mustSession(t, next, "me")
		if small, err = next.SaveCopy(ctx, sess.ID, store.CopyMeta{}, strings.NewReader("fits")); err != nil {
			t.Fatal(err)
		}
		next.Close()
	}
}

func checkFull(t *testing.T, err error, op string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrFull) || !errors.Is(err, store.ErrUnavailable) || e.Op != op || e.Hint == "" {
		t.Fatalf("%s: err = %v; want an *Error for %q matching ErrFull, with a hint", op, err, op)
	}
	t.Logf("%s: %v", op, err)
}
