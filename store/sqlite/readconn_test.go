package sqlite

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/scrollback-dev/scrollback/store"
)

// saved makes a database at path holding one copy of data, closes it, and
// returns the copy's session and id.
func saved(t *testing.T, path string, o *Options, data []byte) (session, id string) {
	t.Helper()
	db, err := Open(path, o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sess, err := db.CreateSession(t.Context(), "me")
	if err != nil {
		t.Fatal(err)
	}
	info, err := db.SaveCopy(t.Context(), sess.ID, store.CopyMeta{Tool: "t", Source: "s", Complete: true}, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return sess.ID, info.ID
}

// A reader's connection reads a page with the copy's info, refuses to
// write (query_only), and on close leaves the write-ahead log when
// LeaveLog says so and checkpoints it away otherwise, as the pool's
// connections do: it may be the last connection to close.
func TestReadConn(t *testing.T) {
	data := bytes.Repeat([]byte("a line of a retained copy\n"), 10_000)
	for _, leaveLog := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "r.db")
		session, id := saved(t, path, &Options{LeaveLog: true}, data)
		wal := path + "-wal"
		if fi, err := os.Stat(wal); err != nil || fi.Size() == 0 {
			t.Fatalf("no write-ahead log left by the save (%v): the test needs one", err)
		}

		conn, err := openReadConn(path, false, false, leaveLog, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var d DB // its info memo and chunk cache, empty
		p := make([]byte, 100)
		info, n, err := d.readCopyAt(conn, session, id, p, 70_000)
		if n != len(p) || err != nil || !bytes.Equal(p, data[70_000:70_100]) {
			t.Errorf("readCopyAt = %d, %v, %q; want 100 bytes of the copy", n, err, p[:n])
		}
		if info.ID != id || info.Session != session || info.Tool != "t" || info.Source != "s" || info.TotalBytes != int64(len(data)) || !info.Complete {
			t.Errorf("readCopyAt's info = %+v", info)
		}
		// Again, now that the info is known: the page alone.
		if _, known := d.infos.get(session, id); !known {
			t.Errorf("the copy's info was not kept")
		}
		if info2, n, err := d.readCopyAt(conn, session, id, p, int64(len(data))-10); n != 10 || err != io.EOF || info2 != info {
			t.Errorf("readCopyAt at the end = %+v, %d, %v; want the same info, 10, io.EOF", info2, n, err)
		}
		if err := conn.exec("DELETE FROM copies"); err == nil {
			t.Errorf("a reader's connection deleted copies")
		}
		if info, n, err := d.readCopyAt(conn, session, store.NewID(store.CopyPrefix), p, 0); n != 0 || !errors.Is(err, store.ErrCopyNotFound) || info.ID != "" {
			t.Errorf("readCopyAt of another id = %+v, %d, %v; want ErrCopyNotFound", info, n, err)
		}
		conn.close()

		_, err = os.Stat(wal)
		switch {
		case leaveLog && err != nil:
			t.Errorf("with LeaveLog, closing the last connection removed the log: %v", err)
		case !leaveLog && !os.IsNotExist(err):
			t.Errorf("without LeaveLog, the log is still there after the last connection closed: %v", err)
		}
	}
}

// A read whose reader cannot open its connection fails with an *Error
// saying why, and a later read opens one.
func TestReadConnOpenFails(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	session, id := saved(t, path, nil, []byte("retained"))
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The pool's connections keep the file open; a reader opening its
	// own finds none there.
	if err := os.Rename(path, path+".away"); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 8)
	_, n, err := db.StatReadCopyAt(t.Context(), session, id, p, 0)
	var e *Error
	if n != 0 || !errors.As(err, &e) || e.Op != "read copy" || e.Hint == "" || !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("StatReadCopyAt with the file gone = %d, %v; want an *Error for read copy with a hint", n, err)
	}
	t.Log(err)
	if err := os.Rename(path+".away", path); err != nil {
		t.Fatal(err)
	}
	if _, n, err := db.StatReadCopyAt(t.Context(), session, id, p, 0); n != 8 || err != nil || string(p) != "retained" {
		t.Fatalf("StatReadCopyAt with the file back = %d, %v, %q", n, err, p)
	}
}

// After Close, a read fails at once.
func TestReadAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	session, id := saved(t, path, nil, []byte("retained"))
	db, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 8)
	if _, n, err := db.StatReadCopyAt(t.Context(), session, id, p, 0); n != 8 || err != nil {
		t.Fatalf("StatReadCopyAt = %d, %v", n, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, n, err := db.StatReadCopyAt(t.Context(), session, id, p, 0); n != 0 || err == nil {
		t.Fatalf("StatReadCopyAt after Close = %d, %v; want an error", n, err)
	}
}

// A reader's connection lives on, with its page cache, and the copy's
// info is remembered; a copy another process then evicts or deletes
// still reads as evicted or missing at once, never from either.
func TestReadSeesOtherHandle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.db")
	data := bytes.Repeat([]byte("a line of a retained copy\n"), 3*store.ChunkSize/26)
	session, first := saved(t, path, nil, data)
	ctx := t.Context()
	a, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path, nil) // the other process
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	second, err := b.SaveCopy(ctx, session, store.CopyMeta{}, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 4096)
	for _, id := range []string{first, second.ID} {
		for off := int64(0); off < int64(len(data))-4096; off += 40_000 {
			if _, n, err := a.StatReadCopyAt(ctx, session, id, p, off); n != len(p) || err != nil || !bytes.Equal(p, data[off:off+4096]) {
				t.Fatalf("StatReadCopyAt(%s, %d) = %d, %v", id, off, n, err)
			}
		}
	}

	// b evicts both: a session quota that holds one copy, and a save.
	st, err := b.Stats(ctx, session)
	if err != nil {
		t.Fatal(err)
	}
	b.SetLimits(store.Limits{SessionQuota: st.StoredBytes/2 + 1, DBCap: store.DefaultDBCap})
	if _, err := b.SaveCopy(ctx, session, store.CopyMeta{}, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if _, n, err := a.StatReadCopyAt(ctx, session, first, p, 4096); n != 0 || !errors.Is(err, store.ErrEvicted) {
		t.Errorf("StatReadCopyAt of a copy the other process evicted = %d, %v; want ErrEvicted", n, err)
	}
	if _, n, err := a.StatReadCopyAt(ctx, session, second.ID, p, 4096); n != 0 || !errors.Is(err, store.ErrEvicted) {
		t.Errorf("StatReadCopyAt of the other process's copy, evicted too = %d, %v; want ErrEvicted", n, err)
	}

	// b deletes the session.
	if err := b.DeleteSession(ctx, "me", session); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{first, second.ID} {
		if info, n, err := a.StatReadCopyAt(ctx, session, id, p, 0); n != 0 || !errors.Is(err, store.ErrCopyNotFound) || info.ID != "" {
			t.Errorf("StatReadCopyAt(%s) after the other process deleted its session = %+v, %d, %v; want ErrCopyNotFound", id, info, n, err)
		}
	}
}
