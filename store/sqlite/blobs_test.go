package sqlite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/scrollback-dev/scrollback/store"
)

// keptCopy saves a compressible copy of n bytes in a new session of owner
// and returns its text, session and id.
func keptCopy(t *testing.T, d *DB, owner string, n int) ([]byte, string, string) {
	t.Helper()
	var text []byte
	for i := 0; len(text) < n; i++ {
		text = fmt.Appendf(text, "line %08d of a copy read from kept chunks\n", i)
	}
	text = text[:n]
	sess, err := d.CreateSession(t.Context(), owner)
	if err != nil {
		t.Fatal(err)
	}
	info, err := d.SaveCopy(t.Context(), sess.ID, store.CopyMeta{Tool: "t", Complete: true}, bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return text, sess.ID, info.ID
}

func openTest(t *testing.T, path string) *DB {
	t.Helper()
	d, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// Pages read again come from the kept chunks with the same bytes and the
// same end-of-copy answers as from the database, for pages inside one
// chunk, across two, and at the end.
func TestKeptChunksSameBytes(t *testing.T) {
	d := openTest(t, filepath.Join(t.TempDir(), "k.db"))
	text, sess, id := keptCopy(t, d, "me", 5*store.ChunkSize+1234)
	total := int64(len(text))
	offs := []int64{0, 4096, store.ChunkSize - 100, 2*store.ChunkSize - 1, total - 4096, total - 10, total - 1}
	r := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		offs = append(offs, r.Int64N(total))
	}
	for pass := range 2 {
		for _, off := range offs {
			p := make([]byte, 4096)
			info, n, err := d.StatReadCopyAt(t.Context(), sess, id, p, off)
			want := text[off:min(off+4096, total)]
			wantErr := error(nil)
			if len(want) < 4096 {
				wantErr = io.EOF
			}
			if err != wantErr || !bytes.Equal(p[:n], want) || info.TotalBytes != total || info.ID != id {
				t.Fatalf("pass %d, offset %d: %d bytes (%v), info %+v; want %d bytes (%v)", pass, off, n, err, info, len(want), wantErr)
			}
		}
		if kept, _ := d.blobs.len(); kept == 0 {
			t.Fatalf("pass %d: no chunk kept", pass)
		}
	}
	// Beyond and at the end: the database's answers, as before.
	if _, _, err := d.StatReadCopyAt(t.Context(), sess, id, make([]byte, 10), total); err != io.EOF {
		t.Fatalf("read at the end: %v, want io.EOF", err)
	}
	if _, _, err := d.StatReadCopyAt(t.Context(), sess, id, make([]byte, 10), total+1); !errors.Is(err, store.ErrOffset) {
		t.Fatalf("read past the end: %v, want ErrOffset", err)
	}
}

// A kept copy still reads as missing for another session, and once
// another process (a second handle on the file) deletes its session or
// evicts it: existence and ownership come from the database on every read.
func TestKeptChunksStillChecked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.db")
	a := openTest(t, path)
	b := openTest(t, path)
	ctx := t.Context()
	text, sess, id := keptCopy(t, a, "me", 3*store.ChunkSize)
	_, sess2, id2 := keptCopy(t, a, "me", 3*store.ChunkSize)
	read := func(d *DB, session, id string) error {
		p := make([]byte, 4096)
		_, n, err := d.StatReadCopyAt(ctx, session, id, p, 5000)
		if err == nil && !bytes.Equal(p[:n], text[5000:5000+4096]) {
			t.Fatalf("read %s: wrong bytes", id)
		}
		return err
	}
	for _, c := range [][2]string{{sess, id}, {sess, id}, {sess2, id2}, {sess2, id2}} {
		if err := read(a, c[0], c[1]); err != nil {
			t.Fatal(err)
		}
	}
	if kept, _ := a.blobs.len(); kept < 2 {
		t.Fatalf("%d chunks kept, want the two copies'", kept)
	}

	other, err := a.CreateSession(ctx, "someone else")
	if err != nil {
		t.Fatal(err)
	}
	if err := read(a, other.ID, id); !errors.Is(err, store.ErrCopyNotFound) {
		t.Fatalf("another session reading a kept copy: %v, want ErrCopyNotFound", err)
	}

	if err := b.DeleteSession(ctx, "me", sess); err != nil {
		t.Fatal(err)
	}
	if err := read(a, sess, id); !errors.Is(err, store.ErrCopyNotFound) {
		t.Fatalf("kept copy after another handle deleted its session: %v, want ErrCopyNotFound", err)
	}

	// Evicted by the other handle under a quota: reads as evicted.
	b.SetLimits(store.Limits{SessionQuota: 1})
	if _, err := b.SaveCopy(ctx, sess2, store.CopyMeta{Tool: "t", Complete: true}, bytes.NewReader([]byte("x"))); err != nil {
		t.Fatal(err)
	}
	var ev *store.EvictedError
	if err := read(a, sess2, id2); !errors.As(err, &ev) || ev.ID != id2 {
		t.Fatalf("kept copy evicted by another handle: %v, want an EvictedError", err)
	}
}

// The kept chunks stay within their bound, and eviction forgets a copy's.
func TestKeptChunksBounded(t *testing.T) {
	var c chunkBlobs
	data := make([]byte, maxBlob)
	for i := range 3 * maxBlobBytes / maxBlob {
		c.put("out_x", int64(i), 2, data)
		if _, n := c.len(); n > maxBlobBytes {
			t.Fatalf("after %d puts: %d bytes kept, bound %d", i+1, n, maxBlobBytes)
		}
	}
	c.put("out_big", 0, 2, make([]byte, maxBlob+1))
	if _, ok := c.get("out_big", 0); ok {
		t.Fatal("a blob over maxBlob was kept")
	}
	c.put("out_y", 0, 2, []byte("y"))
	c.forget("out_x", "out_y")
	if n, bytes := c.len(); n != 0 || bytes != 0 {
		t.Fatalf("after forget: %d chunks, %d bytes; want none", n, bytes)
	}
}
