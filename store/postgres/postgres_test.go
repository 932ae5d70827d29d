package postgres

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/internal/sample"
	"github.com/scrollback-dev/scrollback/store/postgres/pgtest"
	"github.com/scrollback-dev/scrollback/store/storetest"
)

// The tests need a PostgreSQL server: pgtest says which, and makes each
// test a database of its own there, dropped after.

func serverURL(tb testing.TB) string { return pgtest.Server(tb) }

// newDatabase creates an empty database on the test server and returns its
// URL, with params added to the query (pool settings, say). The database is
// dropped when the test ends.
func newDatabase(tb testing.TB, params ...string) string { return pgtest.Database(tb, params...) }

func openTest(tb testing.TB, u string) *DB {
	tb.Helper()
	db, err := Open(context.Background(), u)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

// TestConformance runs the Store conformance suite, unchanged, with a fresh
// database per subtest.
func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		return openTest(t, newDatabase(t))
	})
}

func count(t *testing.T, db *DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.pool.QueryRow(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// Two instances opening a new database at once migrate it exactly once; a
// later open changes nothing.
func TestMigrateConcurrent(t *testing.T) {
	u := newDatabase(t)
	const n = 6
	dbs := make([]*DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			dbs[i], errs[i] = Open(t.Context(), u)
		})
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("concurrent Open %d: %v", i, errs[i])
		}
		defer dbs[i].Close()
	}
	db := dbs[0]
	if got := count(t, db, "SELECT count(*) FROM schema_migrations"); got != int64(len(migrations)) {
		t.Errorf("schema_migrations has %d rows, want %d", got, len(migrations))
	}
	if got := count(t, db, "SELECT max(version) FROM schema_migrations"); got != int64(len(migrations)) {
		t.Errorf("schema version %d, want %d", got, len(migrations))
	}
	again := openTest(t, u)
	if got := count(t, again, "SELECT count(*) FROM schema_migrations"); got != int64(len(migrations)) {
		t.Errorf("after reopening, schema_migrations has %d rows, want %d", got, len(migrations))
	}
}

func TestNewerSchema(t *testing.T) {
	u := newDatabase(t)
	db := openTest(t, u)
	if _, err := db.pool.Exec(t.Context(), "INSERT INTO schema_migrations (version) VALUES ($1)", len(migrations)+1); err != nil {
		t.Fatal(err)
	}
	_, err := Open(t.Context(), u)
	if !errors.Is(err, ErrNewerSchema) {
		t.Fatalf("Open of a newer schema: err = %v, want ErrNewerSchema", err)
	}
	if !strings.Contains(err.Error(), "upgrade scrollback") {
		t.Errorf("error %q gives no hint", err)
	}
}

func TestMissingDatabase(t *testing.T) {
	u, err := url.Parse(serverURL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/scrollback_no_such_database"
	_, err = Open(t.Context(), u.String())
	if err == nil {
		t.Fatal("Open of a database that does not exist succeeded")
	}
	for _, want := range []string{"postgres: connect:", "scrollback_no_such_database", "createdb"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

// Deleting a session deletes its copies' rows and chunks, not only the
// session row.
func TestDeleteReclaims(t *testing.T) {
	db := openTest(t, newDatabase(t))
	ctx := t.Context()
	keep, _ := db.CreateSession(ctx, "alice")
	gone, err := db.CreateSession(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 5*store.ChunkSize/16+3)
	for _, s := range []store.Session{keep, gone, gone} {
		if _, err := db.SaveCopy(ctx, s.ID, store.CopyMeta{}, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	perCopy := int64(len(data)+store.ChunkSize-1) / store.ChunkSize
	if got := count(t, db, "SELECT count(*) FROM chunks"); got != 3*perCopy {
		t.Fatalf("before delete: %d chunks, want %d", got, 3*perCopy)
	}
	if err := db.DeleteSession(ctx, "alice", gone.ID); err != nil {
		t.Fatal(err)
	}
	if got := count(t, db, "SELECT count(*) FROM chunks"); got != perCopy {
		t.Errorf("after delete: %d chunks, want %d (the kept copy's)", got, perCopy)
	}
	if got := count(t, db, "SELECT count(*) FROM copies"); got != 1 {
		t.Errorf("after delete: %d copies, want 1", got)
	}
	// The repetitive data is stored compressed: every chunk far smaller
	// than the store.ChunkSize bytes it holds.
	if got := count(t, db, "SELECT max(length(data)) FROM chunks WHERE codec = 2"); got <= 0 || got >= store.ChunkSize/4 {
		t.Errorf("largest compressed chunk is %d bytes, want under %d", got, store.ChunkSize/4)
	}
}

// Owners, tools and sources come back byte for byte, NUL and invalid UTF-8
// included, which TEXT columns would refuse.
func TestBinaryStrings(t *testing.T) {
	db := openTest(t, newDatabase(t))
	ctx := t.Context()
	for _, owner := range []string{"", "a\x00b", "\xff\xfe", "日本"} {
		s, err := db.CreateSession(ctx, owner)
		if err != nil {
			t.Fatalf("CreateSession(%q): %v", owner, err)
		}
		got, err := db.GetSession(ctx, owner, s.ID)
		if err != nil || got.Owner != owner {
			t.Errorf("GetSession(%q) = %q, %v", owner, got.Owner, err)
		}
		d, err := db.DefaultSession(ctx, owner)
		if err != nil || d.Owner != owner {
			t.Errorf("DefaultSession(%q) = %q, %v", owner, d.Owner, err)
		}
		meta := store.CopyMeta{Tool: owner + "\x00tool", Source: "\x00\xc3(" + owner}
		info, err := db.SaveCopy(ctx, s.ID, meta, strings.NewReader("x"))
		if err != nil {
			t.Fatalf("SaveCopy: %v", err)
		}
		st, err := db.StatCopy(ctx, s.ID, info.ID)
		if err != nil || st.Tool != meta.Tool || st.Source != meta.Source {
			t.Errorf("StatCopy = %q, %q, %v; want %q, %q", st.Tool, st.Source, err, meta.Tool, meta.Source)
		}
	}
	if _, err := db.GetSession(ctx, "a", mustSession(t, db, "a\x00b").ID); !errors.Is(err, store.ErrSessionNotFound) {
		t.Errorf("owner %q reads owner %q's session: %v", "a", "a\x00b", err)
	}
}

func mustSession(t *testing.T, db *DB, owner string) store.Session {
	t.Helper()
	s, err := db.CreateSession(t.Context(), owner)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A 4 KiB page read anywhere returns exactly the saved bytes, whichever
// chunks it straddles; the read query's bounds are those piece computes.
func TestReadPages(t *testing.T) {
	db := openTest(t, newDatabase(t))
	ctx := t.Context()
	s := mustSession(t, db, "alice")
	data := make([]byte, 3*store.ChunkSize+777)
	for i := range data {
		data[i] = byte(i*7 + i/251)
	}
	info, err := db.SaveCopy(ctx, s.ID, store.CopyMeta{}, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	const C = store.ChunkSize
	total := int64(len(data))
	tests := []struct {
		off  int64
		n    int
		want int
		err  error
	}{
		{0, 0, 0, nil},
		{total, 0, 0, nil},
		{total, 1, 0, io.EOF},
		{total + 1, 0, 0, store.ErrOffset},
		{total + 1, 1, 0, store.ErrOffset},
		{-1, 1, 0, store.ErrOffset},
		{C - 2048, 4096, 4096, nil},
		{C - 1, 2, 2, nil},
		{2*C - 4096, 4096, 4096, nil},
		{3*C - 1, 4096, 778, io.EOF},
		{total - 10, 4096, 10, io.EOF},
		{1, 3*C + 776, 3*C + 776, nil},
		{0, 5 * C, int(total), io.EOF},
	}
	for _, tt := range tests {
		p := make([]byte, tt.n)
		n, err := db.ReadCopyAt(ctx, s.ID, info.ID, p, tt.off)
		if n != tt.want || !errors.Is(err, tt.err) && err != tt.err {
			t.Errorf("ReadCopyAt(off %d, len %d) = %d, %v; want %d, %v", tt.off, tt.n, n, err, tt.want, tt.err)
			continue
		}
		if tt.off >= 0 && tt.off <= total && !bytes.Equal(p[:n], data[tt.off:tt.off+int64(n)]) {
			t.Errorf("ReadCopyAt(off %d, len %d): wrong bytes", tt.off, tt.n)
		}
	}
}

// FuzzPiece: for any copy size, offset and length, the pieces that piece
// and chunkRange select from the chunks concatenate to exactly the bytes
// [off, min(off+n, total)), each piece within its chunk. This is the
// arithmetic readQuery does in SQL.
func FuzzPiece(f *testing.F) {
	const C = store.ChunkSize
	f.Add(uint32(3*C+100), uint32(C-1), uint16(2))
	f.Add(uint32(C), uint32(0), uint16(4096))
	f.Add(uint32(2*C), uint32(C-2048), uint16(4096))
	f.Add(uint32(10), uint32(10), uint16(1))
	f.Fuzz(func(t *testing.T, size, off32 uint32, n16 uint16) {
		total := int64(size % (5 * C))
		off := int64(off32) % (total + 1)
		n := int64(n16)%(3*C) + 1
		end := off + n
		// The chunks as stored: every one full but the last.
		chunk := func(seq int64) (lo, hi int64) { return seq * C, min((seq+1)*C, total) }
		first, last := chunkRange(off, end)
		var got int64 // bytes assembled, in order
		for seq := first; seq <= last; seq++ {
			lo, hi := chunk(seq)
			if lo >= total {
				break // no such chunk: the LEFT JOIN yields nothing
			}
			from, cnt := piece(seq, off, end)
			if from < 0 || cnt <= 0 {
				t.Fatalf("chunk %d: piece(%d, %d) = %d, %d", seq, off, end, from, cnt)
			}
			// substring truncates at the chunk's end.
			pieceLo := lo + from
			pieceHi := min(pieceLo+cnt, hi)
			if pieceLo != off+got {
				t.Fatalf("chunk %d piece starts at %d, want %d", seq, pieceLo, off+got)
			}
			got += pieceHi - pieceLo
		}
		if want := min(end, total) - off; got != want {
			t.Fatalf("total %d, off %d, n %d: assembled %d bytes, want %d", total, off, n, got, want)
		}
		if last-first > (n+C-1)/C {
			t.Fatalf("%d chunks for %d bytes", last-first+1, n)
		}
	})
}

func TestErrorStrings(t *testing.T) {
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Op: "open", Server: "h:5432/db", Err: errors.New("boom")}, "postgres: open: boom (h:5432/db)"},
		{&Error{Op: "open", Err: errors.New("postgres: bad"), Hint: "fix it"}, "postgres: open: bad; fix it"},
		{&Error{Op: "x", Server: "s", Err: &classified{Kind: ErrUnavailable, Cause: io.EOF}, Hint: "h"}, "postgres: x: database unavailable: EOF (s); h"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	e := &Error{Op: "x", Err: &classified{Kind: ErrUnavailable, Cause: io.EOF}}
	if !errors.Is(e, ErrUnavailable) || !errors.Is(e, io.EOF) {
		t.Errorf("errors.Is does not see both the kind and the cause")
	}
}

// BenchmarkReadPage4KiB reads random 4 KiB pages of an 8 MiB copy through
// ReadCopyAt, as store/sqlite's benchmark of the same name does (target: a
// median of at most 1 ms on loopback). Each iteration reads the page from
// the copy stored compressed (the default), then from the same bytes stored
// raw, the reference, so that both see the same load; it reports the
// median, 90th and 99th percentile of the first, the median of the second
// and their ratio.
func BenchmarkReadPage4KiB(b *testing.B) {
	for _, k := range append([]struct {
		name string
		data []byte
	}{{"lines", payload(8 << 20)}, {"go-test-log", sample.GoTestLog(8 << 20)}}, smallCopies...) {
		b.Run(k.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			benchPages(b, k.data, func(total int64) int64 { return r.Int64N(total - 4096) })
		})
	}
}

// BenchmarkReadPageSequential pages forward through an 8 MiB go test log,
// and through small copies, 4 KiB at a time, as a reader following nextOffset does, from compressed
// chunks and raw ones, as BenchmarkReadPage4KiB does: with the chunk cache
// the compressed median should be that of the raw one (ratio about 1).
func BenchmarkReadPageSequential(b *testing.B) {
	for _, k := range append([]struct {
		name string
		data []byte
	}{{"go-test-log", sample.GoTestLog(8 << 20)}}, smallCopies...) {
		b.Run(k.name, func(b *testing.B) {
			off := int64(-4096)
			benchPages(b, k.data, func(total int64) int64 {
				if off += 4096; off+4096 > total {
					off = 0
				}
				return off
			})
		})
	}
}

// smallCopies are the copies people retain most: a little over a
// preview's budget to a few hundred KB (issue 32), as in store/sqlite's
// benchmarks.
var smallCopies = []struct {
	name string
	data []byte
}{
	{"seq-1-100000", sample.Seq(588_895)},
	{"go-test-log-100KB", sample.GoTestLog(100_000)},
	{"seq-1-7000", sample.Seq(33_894)},
}

// benchPages saves data twice in a fresh database, compressed and raw, and
// reads the 4 KiB page at next(size) from each per iteration.
func benchPages(b *testing.B, data []byte, next func(total int64) int64) {
	db := openTest(b, newDatabase(b))
	ctx := context.Background()
	s, err := db.CreateSession(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	var infos [2]store.CopyInfo // compressed, raw
	for i := range infos {
		db.raw = i == 1
		if infos[i], err = db.SaveCopy(ctx, s.ID, store.CopyMeta{}, bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
	p := make([]byte, 4096)
	b.SetBytes(4096)
	var lat, ref latencies
	for b.Loop() {
		off := next(int64(len(data)))
		for i, l := range []*latencies{&lat, &ref} {
			done := l.start()
			if n, err := db.ReadCopyAt(ctx, s.ID, infos[i].ID, p, off); n != len(p) || err != nil {
				b.Fatalf("ReadCopyAt(%d) = %d, %v", off, n, err)
			}
			done()
		}
	}
	lat.report(b)
	if len(ref.d) > 0 {
		slices.Sort(ref.d)
		raw := ref.d[len(ref.d)/2]
		b.ReportMetric(float64(raw.Nanoseconds())/1e3, "raw-p50-µs")
		b.ReportMetric(float64(lat.d[len(lat.d)/2])/float64(raw), "p50/raw")
	}
}

// BenchmarkCompressionRatio saves each kind of output and reports logical /
// stored bytes as stats counts them, as store/sqlite's benchmark of the
// same name does: 8 MiB of each (target: at least 4x) and the small copies
// (targets: seq-1-100000 at least 1/0.45 = 2.2x, the 100 KB go test log at
// least 1/0.3 = 3.3x). The reference is raw storage, 1x by definition.
func BenchmarkCompressionRatio(b *testing.B) {
	for _, k := range append([]struct {
		name string
		data []byte
	}{{"go-test-log", sample.GoTestLog(8 << 20)}, {"json-export", sample.JSONExport(8 << 20)}, {"seq", sample.Seq(8 << 20)}}, smallCopies...) {
		b.Run(k.name, func(b *testing.B) {
			db := openTest(b, newDatabase(b))
			ctx := context.Background()
			sess, err := db.CreateSession(ctx, "bench")
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(k.data)))
			for b.Loop() {
				if _, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(k.data)); err != nil {
					b.Fatal(err)
				}
			}
			st, err := db.Stats(ctx, sess.ID)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(st.CompressionRatio(), "ratio")
		})
	}
}

// BenchmarkSaveCopy8MiB saves one 8 MiB copy per iteration, as
// store/sqlite's benchmark of the same name does.
func BenchmarkSaveCopy8MiB(b *testing.B) {
	db := openTest(b, newDatabase(b))
	ctx := context.Background()
	data := payload(8 << 20)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var sess store.Session
	var lat latencies
	n := 0
	for b.Loop() {
		b.StopTimer()
		if n%4 == 0 {
			if sess.ID != "" {
				db.DeleteSession(ctx, "bench", sess.ID)
			}
			sess, _ = db.CreateSession(ctx, "bench")
		}
		n++
		b.StartTimer()
		done := lat.start()
		if _, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{Tool: "bench"}, bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		done()
	}
	lat.report(b)
}

// BenchmarkQuota300: 300 saves of 2 MiB under a 256 MiB session quota,
// as store/sqlite's (storetest.BenchQuota300). database/quota is
// pg_database_size, measured right after the saves, while the background
// VACUUM may still be catching up: nothing waits for it.
func BenchmarkQuota300(b *testing.B) {
	storetest.BenchQuota300(b, func(b *testing.B) store.Store { return openTest(b, newDatabase(b)) })
}

// payload is n bytes of text lines with some multi-byte characters.
func payload(n int) []byte {
	line := []byte("the quick brown fox jumps over the lazy dog 日本語 0123456789\n")
	return bytes.Repeat(line, n/len(line)+1)[:n]
}

func TestMain(m *testing.M) {
	if os.Getenv(envHelper) != "" {
		os.Exit(killHelper())
	}
	os.Exit(m.Run())
}
