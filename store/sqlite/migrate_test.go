package sqlite_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/internal/sample"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// TestMigrateV1 opens a database written by the release before compression
// and quotas (testdata/v1.db, schema version 1, raw chunks) and checks that
// its copies read back unchanged, that it takes new, compressed copies
// beside them, and that its totals are known to stats.
func TestMigrateV1(t *testing.T) {
	src, err := os.ReadFile("testdata/v1.db")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v1.db")
	if err := os.WriteFile(path, src, 0o600); err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatalf("Open(v1 database): %v", err)
	}
	defer db.Close()
	ctx := t.Context()
	const (
		session = "s_wm2wtvdtfe2l5mehgf2vojz24i"
		seqLike = "out_rdanxb3jecchl7dcd4t4iik7rm"
		small   = "out_cogq27ypdvcc25fcr2qjpadnqu"
	)
	var want bytes.Buffer
	for i := range 10000 {
		fmt.Fprintf(&want, "line %d: héllo ✓\n", i)
	}
	for _, c := range []struct {
		id       string
		data     []byte
		lines    int64
		complete bool
	}{
		{seqLike, want.Bytes(), 10000, true},
		{small, []byte("hello\nworld"), 2, false},
	} {
		info, err := db.StatCopy(ctx, session, c.id)
		if err != nil {
			t.Fatalf("StatCopy(%s): %v", c.id, err)
		}
		if info.TotalBytes != int64(len(c.data)) || info.Lines != c.lines || info.Complete != c.complete {
			t.Errorf("StatCopy(%s) = %+v, want %d bytes, %d lines, complete %v", c.id, info, len(c.data), c.lines, c.complete)
		}
		got := make([]byte, len(c.data)+10)
		n, err := db.ReadCopyAt(ctx, session, c.id, got, 0)
		if err != io.EOF || !bytes.Equal(got[:n], c.data) {
			t.Errorf("ReadCopyAt(%s) = %d bytes, %v; want the copy as written", c.id, n, err)
		}
	}
	ss, err := db.ListSessions(ctx, "local")
	if err != nil || len(ss) != 1 || ss[0].LastUsedAt.Before(ss[0].CreatedAt) {
		t.Fatalf("ListSessions = %+v, %v; want the one session, last used no earlier than made", ss, err)
	}
	info, err := db.SaveCopy(ctx, session, store.CopyMeta{}, bytes.NewReader(want.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.Stats(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	// The old raw copy counts as stored at its size; the new one compressed.
	logical := 2*int64(want.Len()) + 11
	if st.Copies != 3 || st.LogicalBytes != logical || st.StoredBytes >= int64(want.Len())+11+int64(want.Len())/4 {
		t.Errorf("Stats after a new save = %+v, want 3 copies, %d logical bytes, the new one compressed", st, logical)
	}
	got := make([]byte, 4096)
	if n, err := db.ReadCopyAt(ctx, session, info.ID, got, 100_000); err != nil || !bytes.Equal(got[:n], want.Bytes()[100_000:104_096]) {
		t.Errorf("ReadCopyAt(new copy) = %d, %v; want its bytes", n, err)
	}
}

// TestAbandonedPendingDeleted: a pending copy whose writer died (no append
// for store.StalePending) is deleted by the next Open; a fresh one stays.
func TestAbandonedPendingDeleted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	db := open(t, path, nil)
	ctx := t.Context()
	sess, _ := db.CreateSession(ctx, "me")
	leavePending(t, db, sess.ID)
	leavePending(t, db, sess.ID)
	db.Close()
	raw := rawDB(t, path)
	if _, err := raw.Exec(`UPDATE copies SET last_read_at = ? WHERE pk = (SELECT min(pk) FROM copies)`,
		time.Now().Add(-store.StalePending-time.Minute).UnixNano()); err != nil {
		t.Fatal(err)
	}
	db = open(t, path, nil)
	var copies, chunks int
	raw.QueryRow(`SELECT count(*) FROM copies`).Scan(&copies)
	raw.QueryRow(`SELECT count(*) FROM chunks`).Scan(&chunks)
	if copies != 1 || chunks != 1 {
		t.Errorf("after reopening: %d copies, %d chunks; want the fresh pending copy only (1, 1)", copies, chunks)
	}
	// The abandoned copy's pages are given back to the file system, as a
	// deleted session's are: a killed save of 8 MiB left them free in the
	// file for good.
	var free int
	raw.QueryRow(`PRAGMA freelist_count`).Scan(&free)
	if free != 0 {
		t.Errorf("after reopening: %d free pages in the file; want the abandoned copy's given back", free)
	}
}

// TestReadsOneFrameChunks: chunks the previous build wrote, one zstd frame
// each (codec 1), read as they did next to the frames this one writes
// (codec 2): random pages, pages forward, the whole copy.
func TestReadsOneFrameChunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	db := open(t, path, nil)
	ctx := context.Background()
	sess, err := db.CreateSession(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	data := sample.GoTestLog(5*store.ChunkSize + 1000)
	old, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Rewrite the copy's chunks as the previous build stored them.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false), zstd.WithWindowSize(1<<17))
	if err != nil {
		t.Fatal(err)
	}
	for seq := int64(0); seq*store.ChunkSize < int64(len(data)); seq++ {
		chunk := data[seq*store.ChunkSize : min(int64(len(data)), (seq+1)*store.ChunkSize)]
		res, err := raw.Exec("UPDATE chunks SET codec = 1, data = ? WHERE seq = ? AND copy = (SELECT pk FROM copies WHERE id = ?)",
			enc.EncodeAll(chunk, nil), seq, old.ID)
		if n, _ := res.RowsAffected(); err != nil || n != 1 {
			t.Fatalf("rewriting chunk %d: %v, %d rows", seq, err, n)
		}
	}
	raw.Close()

	db = open(t, path, nil)
	fresh, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 4096)
	for _, id := range []string{old.ID, fresh.ID} {
		for _, off := range []int64{0, 100, store.ChunkSize - 2048, 3*store.ChunkSize + 20000, int64(len(data)) - 10} {
			n, err := db.ReadCopyAt(ctx, sess.ID, id, p, off)
			if want := data[off:min(int64(len(data)), off+4096)]; !bytes.Equal(p[:n], want) || err != nil && err != io.EOF {
				t.Errorf("%s at %d: %d bytes, %v; want %d bytes of the copy", id, off, n, err, len(want))
			}
		}
		var got []byte
		for off := int64(0); off < int64(len(data)); {
			n, err := db.ReadCopyAt(ctx, sess.ID, id, p, off)
			if n == 0 {
				t.Fatalf("%s: paging forward stopped at %d: %v", id, off, err)
			}
			got, off = append(got, p[:n]...), off+int64(n)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s: paged forward, %d bytes differ from the copy's %d", id, len(got), len(data))
		}
	}
}

// TestClockSetBack: times written while the clock was ahead (a machine
// whose clock was later set back) do not stay in the future for good.
// A session last used "next year" was kept by retention until then
// (max() kept the future time over every later use), and a pending copy
// whose heartbeat is next year was never found abandoned.
func TestClockSetBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clock.db")
	db := open(t, path, nil)
	ctx := t.Context()
	sess, _ := db.CreateSession(ctx, "me")
	if _, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, strings.NewReader("kept\n")); err != nil {
		t.Fatal(err)
	}
	leavePending(t, db, sess.ID)
	db.Close()
	raw := rawDB(t, path)
	future := time.Now().AddDate(1, 0, 0).UnixNano()
	if _, err := raw.Exec(`UPDATE copies SET last_read_at = ?`, future); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE sessions SET last_used_at = ?`, future); err != nil {
		t.Fatal(err)
	}
	var pending int
	if err := raw.QueryRow(`SELECT count(*) FROM copies WHERE pending`).Scan(&pending); err != nil || pending != 1 {
		t.Fatalf("before reopening: %d pending copies, %v; want 1", pending, err)
	}
	db = open(t, path, nil)
	if err := raw.QueryRow(`SELECT count(*) FROM copies WHERE pending`).Scan(&pending); err != nil || pending != 0 {
		t.Errorf("a pending copy last appended to a year from now is not deleted as abandoned")
	}
	// Retention counts from now: a pass with a cutoff an hour ahead
	// deletes the session, as if last used now.
	n, err := db.DeleteIdle(ctx, time.Now().Add(time.Hour))
	if err != nil || n.Sessions != 1 {
		t.Errorf("DeleteIdle(an hour from now) of a session last used a year from now: %+v, %v; want it deleted (1)", n, err)
	}
}

// leavePending begins a copy in session and appends one chunk to it,
// leaving it pending, as a process killed mid-save does.
func leavePending(t *testing.T, db *sqlite.DB, session string) {
	t.Helper()
	p, err := db.BeginCopy(t.Context(), session)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Append(t.Context(), payload(1, store.ChunkSize)); err != nil {
		t.Fatal(err)
	}
}
