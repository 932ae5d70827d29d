package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/internal/sample"
	"github.com/scrollback-dev/scrollback/store/sqlite"
	"github.com/scrollback-dev/scrollback/store/storetest"
)

// Helper-process mode: when the test binary is re-executed with
// helperEnv set, it saves copies into the database named there and exits.
const helperEnv = "SCROLLBACK_SQLITE_TEST_HELPER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		if err := helper(spec); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helper runs one writer process: spec is "path|worker|copies". It opens
// the database (racing the others to create and migrate it), races them for
// the shared owner's default session, and saves copies into that session and
// into one of its own, reading each back. It prints the default session id
// and its own session id.
func helper(spec string) error {
	f := strings.Split(spec, "|")
	if len(f) != 3 {
		return fmt.Errorf("bad spec %q", spec)
	}
	worker, _ := strconv.Atoi(f[1])
	copies, _ := strconv.Atoi(f[2])
	db, err := sqlite.Open(f[0], nil)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	def, err := db.DefaultSession(ctx, "shared")
	if err != nil {
		return err
	}
	own, err := db.CreateSession(ctx, "p"+f[1])
	if err != nil {
		return err
	}
	for i := range copies {
		data := payload(worker*1000+i, 100_000+i*7919)
		for _, sess := range []string{def.ID, own.ID} {
			info, err := db.SaveCopy(ctx, sess, store.CopyMeta{Tool: "helper", Source: fmt.Sprint(worker, i)}, bytes.NewReader(data))
			if err != nil {
				return fmt.Errorf("save %d: %w", i, err)
			}
			p := make([]byte, len(data))
			if n, err := db.ReadCopyAt(ctx, sess, info.ID, p, 0); n != len(data) || (err != nil && err != io.EOF) || !bytes.Equal(p, data) {
				return fmt.Errorf("read back %d: %d bytes, %v", i, n, err)
			}
		}
	}
	fmt.Println(def.ID, own.ID)
	return nil
}

func payload(seed, n int) []byte { return sample.Letters(seed, n) }

func open(t testing.TB, path string, opts *sqlite.Options) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(path, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, filepath.Join(t.TempDir(), "test.db"), nil)
	})
}

func TestPersistsAcrossOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	sess, _ := db.DefaultSession(ctx, "me")
	info, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{Tool: "t", Complete: true}, strings.NewReader("hello\nworld"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, path, nil)
	again, err := db.DefaultSession(ctx, "me")
	if err != nil || again.ID != sess.ID {
		t.Fatalf("DefaultSession after reopen = %s, %v; want %s", again.ID, err, sess.ID)
	}
	st, err := db.StatCopy(ctx, sess.ID, info.ID)
	if err != nil || st.TotalBytes != 11 || st.Lines != 2 || !st.Complete || st.Tool != "t" {
		t.Fatalf("StatCopy after reopen = %+v, %v", st, err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// Deleting a session, or retention deleting idle ones, gives the space
// back to the file system (incremental vacuum) and keeps the rest intact.
func TestDeleteReclaimsSpace(t *testing.T) {
	for _, tt := range []struct {
		name   string
		delete func(t *testing.T, db *sqlite.DB, big, keep store.Session)
	}{
		{"DeleteSession", func(t *testing.T, db *sqlite.DB, big, _ store.Session) {
			if err := db.DeleteSession(t.Context(), "me", big.ID); err != nil {
				t.Fatal(err)
			}
		}},
		{"DeleteIdle", func(t *testing.T, db *sqlite.DB, _, keep store.Session) {
			time.Sleep(5 * time.Millisecond) // order the clock readings, not a timing assertion
			cutoff := time.Now()
			// Use the kept session after the cutoff.
			if _, err := db.ReadCopyAt(t.Context(), keep.ID, mustList(t, db, keep.ID)[0].ID, make([]byte, 1), 0); err != nil {
				t.Fatal(err)
			}
			if _, err := db.SaveCopy(t.Context(), keep.ID, store.CopyMeta{}, strings.NewReader("x")); err != nil {
				t.Fatal(err)
			}
			if gone, err := db.DeleteIdle(t.Context(), cutoff); err != nil || gone.Sessions != 1 {
				t.Fatalf("DeleteIdle = %+v, %v; want the big session", gone, err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "v.db")
			db := open(t, path, nil)
			ctx := t.Context()
			keep, _ := db.CreateSession(ctx, "me")
			if _, err := db.SaveCopy(ctx, keep.ID, store.CopyMeta{}, bytes.NewReader(payload(1, 100_000))); err != nil {
				t.Fatal(err)
			}
			big, _ := db.CreateSession(ctx, "me")
			// Random bytes, stored raw, so that the copies take 16 MiB.
			data := make([]byte, 8<<20+17)
			rand.NewChaCha8([32]byte{2}).Read(data)
			for range 2 {
				if _, err := db.SaveCopy(ctx, big.ID, store.CopyMeta{}, bytes.NewReader(data)); err != nil {
					t.Fatal(err)
				}
			}
			before := fileSize(t, path) + fileSize(t, path+"-wal")
			if before < 16<<20 {
				t.Fatalf("database holding 16 MiB of copies is only %d bytes", before)
			}
			tt.delete(t, db, big, keep)
			after := fileSize(t, path)
			t.Logf("file size (with WAL) %d -> %d bytes, WAL now %d", before, after, fileSize(t, path+"-wal"))
			if after > 2<<20 {
				t.Errorf("after deleting 16 MiB of copies the file is %d bytes (was %d); want the space reclaimed", after, before)
			}
			// What was kept is intact.
			list := mustList(t, db, keep.ID)
			if len(list) == 0 || list[0].TotalBytes != 100_000 {
				t.Fatalf("kept session after vacuum: %v", list)
			}
		})
	}
}

func mustList(t *testing.T, db *sqlite.DB, session string) []store.CopyInfo {
	t.Helper()
	list, err := db.ListCopies(t.Context(), session)
	if err != nil {
		t.Fatal(err)
	}
	return list
}

func TestManyProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("launches processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	// The file does not exist yet: the processes race to create it, to
	// migrate it, and to create the shared default session, then save
	// into it at the same time.
	path := filepath.Join(t.TempDir(), "shared.db")
	const procs, copies = 4, 6
	var wg sync.WaitGroup
	outs := make([]string, procs)
	errs := make([]error, procs)
	start := time.Now()
	for i := range procs {
		wg.Go(func() {
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%d|%d", helperEnv, path, i, copies))
			out, err := cmd.Output()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				err = fmt.Errorf("%w: %s", err, ee.Stderr)
			}
			outs[i], errs[i] = string(out), err
		})
	}
	wg.Wait()
	t.Logf("%d processes x %d copies x 2 sessions in %v", procs, copies, time.Since(start))
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
	if t.Failed() {
		return
	}
	db := open(t, path, nil)
	ctx := t.Context()
	var def string
	for i, out := range outs {
		f := strings.Fields(out)
		if len(f) != 2 {
			t.Fatalf("process %d printed %q", i, out)
		}
		if i == 0 {
			def = f[0]
		} else if f[0] != def {
			t.Errorf("processes disagree on the default session: %s vs %s", def, f[0])
		}
		if list, err := db.ListCopies(ctx, f[1]); err != nil || len(list) != copies {
			t.Errorf("process %d's own session holds %d copies, %v; want %d", i, len(list), err, copies)
		}
	}
	list, err := db.ListCopies(ctx, def)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != procs*copies {
		t.Errorf("shared session holds %d copies, want %d", len(list), procs*copies)
	}
	for _, c := range list {
		var w, i int
		fmt.Sscan(c.Source, &w, &i)
		if want := int64(100_000 + i*7919); c.TotalBytes != want {
			t.Errorf("copy %s from process %d: %d bytes, want %d", c.ID, w, c.TotalBytes, want)
		}
	}
	if sessions, _ := db.ListSessions(ctx, "shared"); len(sessions) != 1 {
		t.Errorf("owner shared has %d sessions, want exactly the one default", len(sessions))
	}
}

func TestReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.db")
	rw := open(t, path, nil)
	ctx := t.Context()
	sess, _ := rw.CreateSession(ctx, "me")
	info, err := rw.SaveCopy(ctx, sess.ID, store.CopyMeta{}, strings.NewReader("readable"))
	if err != nil {
		t.Fatal(err)
	}

	ro := open(t, path, &sqlite.Options{ReadOnly: true})
	p := make([]byte, 8)
	if n, err := ro.ReadCopyAt(ctx, sess.ID, info.ID, p, 0); n != 8 || (err != nil && err != io.EOF) {
		t.Fatalf("read-only ReadCopyAt = %d, %v", n, err)
	}
	_, err = ro.SaveCopy(ctx, sess.ID, store.CopyMeta{}, strings.NewReader("x"))
	checkDBError(t, err, sqlite.ErrReadOnly, "save copy", path)
	_, err = ro.CreateSession(ctx, "me")
	checkDBError(t, err, sqlite.ErrReadOnly, "create session", path)
	err = ro.DeleteSession(ctx, "me", sess.ID)
	checkDBError(t, err, sqlite.ErrReadOnly, "delete session", path)
	if _, err := rw.GetSession(ctx, "me", sess.ID); err != nil {
		t.Errorf("session gone after a read-only delete: %v", err)
	}

	_, err = sqlite.Open(filepath.Join(t.TempDir(), "missing.db"), &sqlite.Options{ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("read-only Open of a missing file: %v; want 'does not exist'", err)
	}
}

// TestReadOnlyFile covers a database file its user may not write, which
// only works when not running as root (root ignores file modes).
func TestReadOnlyFile(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: file modes do not stop writes (TestReadOnly covers mode=ro)")
	}
	if runtime.GOOS == "windows" {
		t.Skip("Windows has no directory modes (TestReadOnly covers mode=ro)")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ro.db")
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := db.CreateSession(t.Context(), "me")
	db.Close()
	os.Chmod(path, 0o444)
	os.Chmod(dir, 0o555)
	t.Cleanup(func() { os.Chmod(dir, 0o755); os.Chmod(path, 0o644) })
	db, err = sqlite.Open(path, nil)
	if err != nil {
		checkDBError(t, err, sqlite.ErrReadOnly, "open", path)
		return
	}
	defer db.Close()
	_, err = db.SaveCopy(t.Context(), sess.ID, store.CopyMeta{}, strings.NewReader("x"))
	checkDBError(t, err, sqlite.ErrReadOnly, "save copy", path)
}

// TestReadOnlyFileSystem: a database on a read-only file system (a
// read-only mount, a snapshot), where SQLite cannot create the -wal and
// -shm files beside it. Open said "cannot open the database file ...
// check that the path and its directory exist and are accessible", of a
// file that exists and can be read; it says the directory cannot be
// written, and why.
func TestReadOnlyFileSystem(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a file system")
	}
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skipf("needs root on Linux to mount a read-only bind mount (%s, uid %d)", runtime.GOOS, os.Geteuid())
	}
	src := t.TempDir()
	db := open(t, filepath.Join(src, "ro.db"), nil)
	if _, err := db.CreateSession(t.Context(), "me"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	dir := readOnlyMount(t, src)
	for _, name := range []string{"ro.db", "new.db"} {
		path := filepath.Join(dir, name)
		db, err := sqlite.Open(path, nil)
		if err == nil {
			db.Close()
			t.Fatalf("Open(%s) on a read-only file system succeeded", name)
		}
		checkDBError(t, err, sqlite.ErrReadOnly, "open", path)
		for _, want := range []string{"read-only file system", dir, "writable"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Open(%s): %q does not say %q", name, err, want)
			}
		}
		if strings.Contains(err.Error(), "exist") {
			t.Errorf("Open(%s): %q suggests the path may not exist", name, err)
		}
	}
}

// TestReadOnlyOpenOnReadOnlyFileSystem: a read-only Open of a database on
// a read-only file system reads it, where SQLite can create neither the
// write-ahead log nor its index: it failed with "unable to open database
// file", so the CLI's reading commands could not read a database they
// were only to read. Both with no log left (a clean close) and with one
// holding commits the file lacks (Options.LeaveLog), whose copy must be
// seen.
func TestReadOnlyOpenOnReadOnlyFileSystem(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a file system")
	}
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skipf("needs root on Linux to mount a read-only bind mount (%s, uid %d)", runtime.GOOS, os.Geteuid())
	}
	ctx := t.Context()
	src := t.TempDir()
	saved := map[string]string{}
	for _, name := range []string{"clean.db", "log.db"} {
		db, err := sqlite.Open(filepath.Join(src, name), &sqlite.Options{LeaveLog: name == "log.db"})
		if err != nil {
			t.Fatal(err)
		}
		sess, err := db.CreateSession(ctx, "me")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, strings.NewReader("kept in "+name)); err != nil {
			t.Fatal(err)
		}
		db.Close()
		saved[name] = sess.ID
	}
	if fi, err := os.Stat(filepath.Join(src, "log.db-wal")); err != nil || fi.Size() == 0 {
		t.Fatalf("log.db left no log to read (%v)", err)
	}
	dir := readOnlyMount(t, src)
	for name, id := range saved {
		path := filepath.Join(dir, name)
		db, err := sqlite.Open(path, &sqlite.Options{ReadOnly: true})
		if err != nil {
			t.Errorf("read-only Open(%s) on a read-only file system: %v", name, err)
			continue
		}
		copies, err := db.ListCopies(ctx, id)
		if err != nil || len(copies) != 1 {
			t.Errorf("%s: ListCopies = %v, %v; want the one copy saved", name, copies, err)
		} else {
			p := make([]byte, 64)
			n, err := db.ReadCopyAt(ctx, id, copies[0].ID, p, 0)
			if got := string(p[:n]); got != "kept in "+name || (err != nil && err != io.EOF) {
				t.Errorf("%s: ReadCopyAt = %q, %v", name, got, err)
			}
		}
		_, err = db.SaveCopy(ctx, id, store.CopyMeta{}, strings.NewReader("x"))
		checkDBError(t, err, sqlite.ErrReadOnly, "save copy", path)
		db.Close()
	}
}

func checkDBError(t *testing.T, err, kind error, op, path string) {
	t.Helper()
	var e *sqlite.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: err = %v (%T), want *sqlite.Error", op, err, err)
		return
	}
	if !errors.Is(err, kind) {
		t.Errorf("%s: err = %v, want it to match %v", op, err, kind)
	}
	if e.Op != op || e.Path != path || e.Hint == "" {
		t.Errorf("%s: Error{Op: %q, Path: %q, Hint: %q}; want op %q, path %q and a hint", op, e.Op, e.Path, e.Hint, op, path)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "sqlite: "+op+": ") || !strings.Contains(msg, path) {
		t.Errorf("%s: message %q should start with %q and name %s", op, msg, "sqlite: "+op+": ", path)
	}
	t.Logf("%s: %v", op, err)
}

// smallFS mounts a tmpfs of size bytes in a temporary directory, to be
// filled, and unmounts it when the test ends; it skips the test, saying
// why, where it cannot (not root, no mount).
func smallFS(t *testing.T, size string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("mounts a file system")
	}
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skipf("needs root on Linux to mount a small tmpfs to fill (%s, uid %d); skipping the full-disk test", runtime.GOOS, os.Geteuid())
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a %s tmpfs to fill (%v: %s); skipping the full-disk test", size, err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// TestDiskFull fills a 3 MiB file system, as a laptop's disk fills: a save
// too large for it fails with ErrFull, saying so; the copies saved before
// still read; and the failed save gives its space back (its partial rows
// deleted, the write-ahead log checkpointed and truncated), so that the
// next save that fits succeeds. That went wrong one time in two: a copy
// saved while its command ran (a pending copy) left its appended chunks in
// the log, which filled the disk for every later save. Each way of saving
// is tried several times over, on fresh databases.
func TestDiskFull(t *testing.T) {
	dir := smallFS(t, "3m")
	// Random bytes, stored raw: compression cannot make them fit.
	big := make([]byte, 8<<20)
	rand.NewChaCha8([32]byte{3}).Read(big)
	fits := sample.Seq(108_894) // seq 1 20000
	for i := range 8 {
		streamed := i%2 == 1
		t.Run(fmt.Sprintf("%d/streamed=%v", i, streamed), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("full%d.db", i))
			db := open(t, path, nil)
			ctx := t.Context()
			sess, err := db.CreateSession(ctx, "me")
			if err != nil {
				t.Fatal(err)
			}
			small, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, strings.NewReader("fits"))
			if err != nil {
				t.Fatal(err)
			}
			if streamed {
				// As a command's capture does: chunks appended while it
				// runs, until the disk refuses one.
				p, err := db.BeginCopy(ctx, sess.ID)
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
				checkDBError(t, err, sqlite.ErrFull, "append to copy", path)
				if err := p.Abort(ctx); err != nil {
					t.Errorf("Abort after the failed append: %v", err)
				}
			} else {
				_, err = db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(big))
				checkDBError(t, err, sqlite.ErrFull, "save copy", path)
			}
			// The failed save's space is back: no log, no row of it.
			if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
				t.Errorf("after the failed save the write-ahead log holds %d bytes, want it truncated", fi.Size())
			}
			raw, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			var copies, chunks int
			if err := raw.QueryRow(`SELECT (SELECT count(*) FROM copies), (SELECT count(*) FROM chunks)`).Scan(&copies, &chunks); err != nil {
				t.Fatal(err)
			}
			raw.Close()
			if copies != 1 || chunks != 1 {
				t.Errorf("after the failed save the database holds %d copies and %d chunks, want the small copy's 1 and 1", copies, chunks)
			}
			if got := readAll(t, db, sess.ID, small.ID); string(got) != "fits" {
				t.Errorf("the copy saved before reads %q", got)
			}
			info, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(fits))
			if err != nil {
				t.Fatalf("seq 1 20000 after the failed save: %v", err)
			}
			if got := readAll(t, db, sess.ID, info.ID); !bytes.Equal(got, fits) {
				t.Errorf("seq 1 20000 reads back %d bytes, not its own", len(got))
			}
			// Stats say what is free and what failed, in this process and
			// (written down) in the next.
			st, err := db.Stats(ctx, "")
			if err != nil {
				t.Fatal(err)
			}
			if st.FreeBytes == nil || st.DiskFreeBytes == nil || *st.DiskFreeBytes <= 0 || *st.DiskFreeBytes > 3<<20 {
				t.Errorf("Stats: FreeBytes %s, DiskFreeBytes %s; want both, the disk's under 3 MiB", show(st.FreeBytes), show(st.DiskFreeBytes))
			}
			f := st.LastSaveFailure
			if f == nil || !f.Full || f.Session != sess.ID || !strings.Contains(f.Error, "full") || time.Since(f.At) > time.Minute {
				t.Errorf("Stats.LastSaveFailure = %+v; want the failed save, for lack of space", f)
			}
			db.Close()
			again := open(t, path, &sqlite.Options{ReadOnly: true})
			if st, err := again.Stats(ctx, sess.ID); err != nil || st.LastSaveFailure == nil || st.LastSaveFailure.Error != f.Error {
				t.Errorf("Stats of another process: %+v, %v; want the same failure", st.LastSaveFailure, err)
			}
			again.Close()
			os.Remove(path)
		})
	}
}

// TestDiskFullUnderQuota: a save that fails for lack of space evicts
// nothing: its evictions roll back with it.
func TestDiskFullUnderQuota(t *testing.T) {
	dir := smallFS(t, "3m")
	path := filepath.Join(dir, "full.db")
	db := open(t, path, nil)
	ctx := t.Context()
	sess, err := db.CreateSession(ctx, "me")
	if err != nil {
		t.Fatal(err)
	}
	small, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, strings.NewReader("fits"))
	if err != nil {
		t.Fatal(err)
	}
	big := make([]byte, 4<<20)
	rand.NewChaCha8([32]byte{3}).Read(big)
	db.SetLimits(store.Limits{SessionQuota: 100})
	_, err = db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(big))
	checkDBError(t, err, sqlite.ErrFull, "save copy", path)
	if got := readAll(t, db, sess.ID, small.ID); string(got) != "fits" {
		t.Errorf("after a failed save under a quota, the small copy reads %q", got)
	}
}

// show prints a number that may be unknown.
func show(n *int64) string {
	if n == nil {
		return "unknown"
	}
	return strconv.FormatInt(*n, 10)
}

// readAll reads a whole copy.
func readAll(t *testing.T, db *sqlite.DB, session, id string) []byte {
	t.Helper()
	info, err := db.StatCopy(t.Context(), session, id)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, info.TotalBytes)
	if n, err := db.ReadCopyAt(t.Context(), session, id, p, 0); int64(n) != info.TotalBytes || err != nil && err != io.EOF {
		t.Fatalf("ReadCopyAt = %d, %v", n, err)
	}
	return p
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o600)
	notDB := filepath.Join(dir, "not.db")
	os.WriteFile(notDB, bytes.Repeat([]byte("this is not a database "), 100), 0o600)
	tests := []struct {
		name, path string
		want       string
	}{
		{"empty", "", "empty database path"},
		{"directory", dir, "is a directory"},
		{"parent is a file", filepath.Join(file, "x.db"), "not a directory"},
		// A directory to create under a file: the message says which
		// part is the file (it was "stat PATH: not a directory").
		{"ancestor is a file", filepath.Join(file, "state", "scrollback", "x.db"),
			"cannot create the directory " + filepath.Join(file, "state", "scrollback") + ": " + file + " is a file, not a directory"},
		{"not a database", notDB, "not a valid scrollback database"},
		// A NUL byte (a string cut from binary data) is named, quoted: it
		// was "stat DIR/x<NUL>.db: invalid argument" with the raw byte.
		{"NUL byte", "x\x00.db", `the path "x\x00.db" holds a NUL byte`},
		{"device", "/dev/null", "not a regular file"},
	}
	if runtime.GOOS == "windows" {
		tests = tests[:6] // no /dev/null
	}
	for _, tt := range tests {
		db, err := sqlite.Open(tt.path, nil)
		if err == nil {
			db.Close()
			t.Errorf("%s: Open(%q) succeeded", tt.name, tt.path)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "sqlite: open") || strings.ContainsRune(err.Error(), 0) {
			t.Errorf("%s: Open(%q): %v; want a message starting 'sqlite: open' and containing %q", tt.name, tt.path, err, tt.want)
		}
	}
}

func TestOpenCreatesDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "state.db")
	db := open(t, path, nil)
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 && runtime.GOOS != "windows" { // Windows has no such modes
		t.Errorf("created directory mode %v, want 0700", fi.Mode().Perm())
	}
	// A relative path is made absolute.
	t.Chdir(t.TempDir())
	rel := open(t, "rel.db", nil)
	if !filepath.IsAbs(rel.Path()) {
		t.Errorf("Path() = %q, want absolute", rel.Path())
	}
}

// TestConcurrentOpenMigrates: openers racing on a new file all succeed.
// The first connection switches the file to WAL mode, a write SQLite does
// not wait for with the busy handler; Open must wait for it anyway rather
// than fail with "database is locked". The race is narrow, so it is run on
// several new files, the openers released together.
func TestConcurrentOpenMigrates(t *testing.T) {
	const rounds, openers = 10, 8
	for round := range rounds {
		path := filepath.Join(t.TempDir(), "race.db")
		start := make(chan struct{})
		var wg sync.WaitGroup
		errs := make([]error, openers)
		for i := range errs {
			wg.Go(func() {
				<-start
				db, err := sqlite.Open(path, nil)
				if err == nil {
					_, err = db.DefaultSession(context.Background(), "me")
					db.Close()
				}
				errs[i] = err
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("round %d: Open %d racing on a new file: %v", round, i, err)
			}
		}
		db := open(t, path, nil)
		if list, err := db.ListSessions(t.Context(), "me"); err != nil || len(list) != 1 {
			t.Errorf("round %d: owner me has %d sessions (%v), want exactly the one default", round, len(list), err)
		}
	}
}

// TestCancelWhileWaiting: a save waiting for another save's write lock
// gives up when its context ends.
func TestCancelWhileWaiting(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "c.db"), nil)
	sess, _ := db.CreateSession(t.Context(), "me")
	release := make(chan struct{})
	started := make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := db.SaveCopy(t.Context(), sess.ID, store.CopyMeta{}, blockingReader{started, release})
		done <- err
	}()
	<-started
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, strings.NewReader("x"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("save waiting for the lock: err = %v, want context.DeadlineExceeded", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("first save: %v", err)
	}
}

type blockingReader struct{ started, release chan struct{} }

func (r blockingReader) Read(p []byte) (int, error) {
	select {
	case <-r.release:
		return 0, io.EOF
	default:
	}
	close(r.started)
	<-r.release
	return copy(p, "done"), io.EOF
}

// FuzzReadCopyAt checks ReadCopyAt against the bytes saved, for any offset
// and length. Invariants: n <= len(p); p[:n] equals the copy's bytes at off;
// err is nil iff off+len(p) <= size (or io.EOF when a full read ends exactly
// at the end); io.EOF iff the read reaches the end short (or off == size);
// ErrOffset iff off < 0 or off > size, with n == 0; bytes past p[:n] are
// untouched.
func FuzzReadCopyAt(f *testing.F) {
	db := open(f, filepath.Join(f.TempDir(), "fuzz.db"), nil)
	ctx := context.Background()
	sess, err := db.CreateSession(ctx, "fuzz")
	if err != nil {
		f.Fatal(err)
	}
	data := payload(42, 3*store.ChunkSize+999)
	info, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(data))
	if err != nil {
		f.Fatal(err)
	}
	size := int64(len(data))
	for _, seed := range [][2]int64{{0, 4096}, {store.ChunkSize - 1, 2}, {size, 10}, {size - 1, 4096}, {-1, 1}, {size + 1, 0}, {0, 0}, {store.ChunkSize, store.ChunkSize}} {
		f.Add(seed[0], int(seed[1]))
	}
	f.Fuzz(func(t *testing.T, off int64, n int) {
		n = int(uint(n) % (4*store.ChunkSize + 1))
		buf := bytes.Repeat([]byte{0xEE}, n+4)
		p := buf[:n]
		got, err := db.ReadCopyAt(ctx, sess.ID, info.ID, p, off)
		if got < 0 || got > n {
			t.Fatalf("n = %d for len(p) %d", got, n)
		}
		if !bytes.Equal(buf[n:], []byte{0xEE, 0xEE, 0xEE, 0xEE}) {
			t.Fatalf("wrote past len(p)")
		}
		switch {
		case off < 0 || off > size:
			if !errors.Is(err, store.ErrOffset) || got != 0 {
				t.Fatalf("off %d of %d: %d, %v; want 0, ErrOffset", off, size, got, err)
			}
			return
		case off+int64(n) <= size:
			if got != n || (err != nil && !(err == io.EOF && off+int64(n) == size)) {
				t.Fatalf("off %d len %d of %d: %d, %v; want a full read", off, n, size, got, err)
			}
		default:
			if int64(got) != size-off || err != io.EOF {
				t.Fatalf("off %d len %d of %d: %d, %v; want %d, io.EOF", off, n, size, got, err, size-off)
			}
		}
		if !bytes.Equal(p[:got], data[off:off+int64(got)]) {
			t.Fatalf("off %d len %d: wrong bytes", off, n)
		}
	})
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.db")
	open(t, path, nil).Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, err = sqlite.Open(path, nil)
	if !errors.Is(err, sqlite.ErrNewerSchema) || !strings.Contains(err.Error(), "99") {
		t.Errorf("Open of a schema from the future: %v; want ErrNewerSchema naming version 99", err)
	}
	// What to do about it, as PostgreSQL's says; read-only too.
	if err == nil || !strings.Contains(err.Error(), "upgrade scrollback") {
		t.Errorf("Open of a schema from the future: %v; want a hint to upgrade scrollback", err)
	}
	_, err = sqlite.Open(path, &sqlite.Options{ReadOnly: true})
	if !errors.Is(err, sqlite.ErrNewerSchema) || !strings.Contains(err.Error(), "upgrade scrollback") {
		t.Errorf("read-only Open of a schema from the future: %v; want ErrNewerSchema with a hint to upgrade scrollback", err)
	}
}

// zeroLines yields n bytes of short lines without holding them in memory.
type zeroLines struct{ n int64 }

func (z *zeroLines) Read(p []byte) (int, error) {
	if z.n == 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), z.n)]
	for i := range p {
		p[i] = 'x'
		if i%80 == 79 {
			p[i] = '\n'
		}
	}
	z.n -= int64(len(p))
	return len(p), nil
}

// TestSaveStreams: saving 32 MiB allocates a small, fixed amount of Go
// memory, not an amount growing with the copy.
func TestSaveStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 32 MiB")
	}
	db := open(t, filepath.Join(t.TempDir(), "s.db"), nil)
	sess, _ := db.CreateSession(t.Context(), "me")
	const size = 32 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	info, err := db.SaveCopy(t.Context(), sess.ID, store.CopyMeta{}, &zeroLines{size})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if info.TotalBytes != size {
		t.Fatalf("saved %d bytes, want %d", info.TotalBytes, size)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("saving %d MiB allocated %d KiB", size>>20, alloc>>10)
	if alloc > 4<<20 {
		t.Errorf("saving %d MiB allocated %d MiB of Go memory; want it bounded by a few chunks", size>>20, alloc>>20)
	}
}

// TestOpenWhileLocked: opening an up-to-date database takes no write
// lock, so a process opening it while another writes (a long save) waits
// for nobody. Open took the lock twice (checking the schema version in a
// write transaction, deleting abandoned copies) and, with many
// `scrollback run`s saving at once, failed with "database is locked"
// before its command's output could be saved; reads did not need it.
func TestOpenWhileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.db")
	db := open(t, path, nil)
	sess, err := db.CreateSession(t.Context(), "me")
	if err != nil {
		t.Fatal(err)
	}
	info, err := db.SaveCopy(t.Context(), sess.ID, store.CopyMeta{}, strings.NewReader("kept\n"))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	defer holdWriteLock(t, path)()
	db, err = sqlite.Open(path, &sqlite.Options{BusyTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open while another connection holds the write lock: %v", err)
	}
	defer db.Close()
	if got := readAll(t, db, sess.ID, info.ID); string(got) != "kept\n" {
		t.Errorf("read while locked: %q", got)
	}
}

// TestDiskFullLeftLog: a copy committed to the write-ahead log must leave
// room to checkpoint it, which grows the file by as much. A 1.5 MB copy
// saved on a 3 MiB file system by a process that leaves its log
// (Options.LeaveLog, as `scrollback run` does) was kept; the next
// process's checkpoint then filled the disk, and nothing could be written
// again, not even the deletion of a session to make room, until space
// was freed by hand. Now such a save fails with ErrFull instead, and the
// database stays usable: whole, or appended while its command runs.
func TestDiskFullLeftLog(t *testing.T) {
	dir := smallFS(t, "3m")
	o := &sqlite.Options{LeaveLog: true, RawChunks: true}
	ctx := t.Context()
	for i := range 8 {
		streamed, chunks := i%2 == 1, 12+i/2*4 // 0.75 to 1.7 MiB
		big := make([]byte, chunks*store.ChunkSize)
		rand.NewChaCha8([32]byte{5}).Read(big)
		t.Run(fmt.Sprintf("streamed=%v/chunks=%d", streamed, chunks), func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("log%d.db", i))
			db := open(t, path, o)
			sess, err := db.CreateSession(ctx, "me")
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
			db = open(t, path, o)
			p, err := db.BeginCopy(ctx, sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			rest := big
			for streamed && len(rest) > store.ChunkSize && err == nil {
				if err = p.Append(ctx, rest[:store.ChunkSize]); err == nil {
					rest = rest[store.ChunkSize:]
				}
			}
			if err == nil {
				_, err = p.Finish(ctx, store.CopyMeta{}, bytes.NewReader(rest))
			} else {
				p.Abort(ctx)
			}
			if err != nil && !errors.Is(err, sqlite.ErrFull) {
				t.Fatalf("saving %d bytes on 3 MiB: %v; want success or ErrFull", len(big), err)
			}
			db.Close()
			db = open(t, path, o)
			p, err = db.BeginCopy(ctx, sess.ID)
			if err != nil {
				t.Fatalf("BeginCopy after: %v", err)
			}
			if _, err := p.Finish(ctx, store.CopyMeta{}, strings.NewReader("fits\n")); err != nil {
				t.Errorf("a small save after: %v", err)
			}
			if err := db.DeleteSession(ctx, "me", sess.ID); err != nil {
				t.Errorf("DeleteSession after: %v", err)
			}
			db.Close()
			os.Remove(path)
		})
	}
}

// readOnlyMount mounts src read-only (a bind mount) at a new directory,
// unmounted when the test ends, and returns that directory; the test is
// skipped where it cannot mount.
func readOnlyMount(t *testing.T, src string) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "--bind", src, dir).CombinedOutput(); err != nil {
		t.Skipf("cannot bind-mount (%v: %s)", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	if out, err := exec.Command("mount", "-o", "remount,ro,bind", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot make the bind mount read-only (%v: %s)", err, bytes.TrimSpace(out))
	}
	return dir
}
