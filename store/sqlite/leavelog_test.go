package sqlite_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// crashEnv makes the test binary a process that saves a copy as
// `scrollback run` does (Options.LeaveLog, appended while "running", then
// finished), prints its id and exits without closing the database: a
// crash right after the copy was reported saved.
const crashEnv = "SCROLLBACK_SQLITE_TEST_CRASH"

func init() {
	spec := os.Getenv(crashEnv)
	if spec == "" {
		return
	}
	path, sess, _ := strings.Cut(spec, "|")
	db, err := sqlite.Open(path, &sqlite.Options{LeaveLog: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx := context.Background()
	data := leaveLogData()
	p, err := db.BeginCopy(ctx, sess)
	if err == nil {
		err = p.Append(ctx, data[:store.ChunkSize*8])
	}
	var info store.CopyInfo
	if err == nil {
		info, err = p.Finish(ctx, store.CopyMeta{Tool: "crash", Complete: true}, bytes.NewReader(data[store.ChunkSize*8:]))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(info.ID)
	os.Exit(0) // no Close
}

func leaveLogData() []byte {
	b := make([]byte, 1<<20+12345)
	rand.NewChaCha8([32]byte{7}).Read(b)
	return b
}

// With Options.LeaveLog, closing leaves the write-ahead log (no checkpoint,
// no fsync on the way out); what it holds reads back in other processes,
// even when the saving process died without closing; the next BeginCopy
// copies it into the file; and it stays bounded however many processes
// leave theirs.
func TestLeaveLog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "l.db")
	ctx := t.Context()
	db, err := sqlite.Open(path, &sqlite.Options{LeaveLog: true})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := db.CreateSession(ctx, "me")
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// A process saves and dies without closing.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path+"|"+sess.ID)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("saving process: %v", err)
	}
	id := strings.TrimSpace(string(out))
	wal := path + "-wal"
	if n := fileSize(t, wal); n < 1<<20 {
		t.Fatalf("the log holds %d bytes after the save, want the copy's 1 MiB in it", n)
	}
	before := fileSize(t, path)

	db, err = sqlite.Open(path, &sqlite.Options{LeaveLog: true})
	if err != nil {
		t.Fatal(err)
	}
	data := leaveLogData()
	got := make([]byte, len(data))
	if n, err := db.ReadCopyAt(ctx, sess.ID, id, got, 0); n != len(data) || (err != nil && err != io.EOF) || !bytes.Equal(got, data) {
		t.Fatalf("the copy saved before the crash: %d bytes, %v", n, err)
	}
	// The next copy begun checkpoints the log into the file first.
	p, err := db.BeginCopy(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after := fileSize(t, path); after < before+1<<20 {
		t.Errorf("database file %d bytes after BeginCopy, %d before: the log was not copied in", after, before)
	}
	p.Abort(ctx)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Processes that each save and close, leaving their log: it stays
	// within sqlite.LeaveLogPages pages (of 4 KiB and a 24-byte header)
	// and what one save writes (twice its size, to spare: the pager's
	// cache spills, and pages written before are written again); the 12
	// saves, unbounded, would take more.
	const save = 2 << 20
	big := make([]byte, save)
	for i := range 12 {
		rand.NewChaCha8([32]byte{byte(i)}).Read(big)
		saveAndClose(t, path, &sqlite.Options{LeaveLog: true}, sess.ID, big)
		n, max := fileSize(t, wal), int64(sqlite.LeaveLogPages*(4096+24)+2*save)
		if n > max {
			t.Fatalf("after save %d the log is %d bytes, over %d", i, n, max)
		}
		if i == 0 && n < save {
			t.Fatalf("after the first save and Close the log is %d bytes: closing checkpointed it", n)
		}
	}

	// Without LeaveLog, closing checkpoints and removes the log.
	saveAndClose(t, path, nil, sess.ID, big)
	if _, err := os.Stat(wal); !os.IsNotExist(err) {
		t.Errorf("the log is still there after a close without LeaveLog: %v", err)
	}
}

// saveAndClose opens the database at path with o, saves data as a copy of
// session and closes it: what one short-lived process does.
func saveAndClose(t *testing.T, path string, o *sqlite.Options, session string, data []byte) {
	t.Helper()
	d, err := sqlite.Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.SaveCopy(t.Context(), session, store.CopyMeta{}, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
