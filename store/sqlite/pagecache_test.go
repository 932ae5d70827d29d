package sqlite

import (
	"bytes"
	"database/sql"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/scrollback-dev/scrollback/store"
)

// Options.PageCacheKiB sets every pooled connection's page cache, and a
// copy far larger than the cache saves and reads back byte for byte:
// appended while "running" as scrollback run does, then finished, with the
// write-ahead log left (LeaveLog), and half of it random bytes stored raw.
func TestPageCacheKiB(t *testing.T) {
	for _, tc := range []struct {
		kib  int
		want int64 // PRAGMA cache_size: negative is KiB
	}{
		{0, -2000},  // SQLite's default
		{16, -16},   // four pages
		{256, -256}, // scrollback run's
	} {
		path := filepath.Join(t.TempDir(), "c.db")
		db, err := Open(path, &Options{LeaveLog: true, PageCacheKiB: tc.kib})
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		// Two connections at once, so the pool cannot hand back one.
		c1, err := db.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c2, err := db.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []*sql.Conn{c1, c2} {
			var got int64
			if err := c.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("PageCacheKiB %d: a connection's cache_size is %d, want %d", tc.kib, got, tc.want)
			}
		}
		c1.Close()
		c2.Close()

		sess, err := db.CreateSession(ctx, "me")
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, 8<<20)
		rand.NewChaCha8([32]byte{byte(tc.kib)}).Read(data[:4<<20])
		copy(data[4<<20:], bytes.Repeat([]byte("a line of the log, 42 bytes long, or so\n"), (4<<20)/40+1))
		p, err := db.BeginCopy(ctx, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		head := 6 << 20 / store.ChunkSize * store.ChunkSize
		for off := 0; off < head; off += 16 * store.ChunkSize {
			if err := p.Append(ctx, data[off:min(head, off+16*store.ChunkSize)]); err != nil {
				t.Fatal(err)
			}
		}
		info, err := p.Finish(ctx, store.CopyMeta{Tool: "t", Complete: true}, bytes.NewReader(data[head:]))
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}

		// Read back by another opening, as the next process would.
		db, err = Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(io.NewSectionReader(store.ReaderAt(ctx, db, sess.ID, info.ID), 0, info.TotalBytes))
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if info.TotalBytes != int64(len(data)) || !bytes.Equal(got, data) {
			t.Errorf("PageCacheKiB %d: read back %d of %d bytes (info says %d), equal: %v", tc.kib, len(got), len(data), info.TotalBytes, bytes.Equal(got, data))
		}
	}
}
