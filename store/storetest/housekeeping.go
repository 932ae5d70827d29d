package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/internal/sample"
)

// housekeepingTests check what store.Housekeeper promises: compression that
// offsets never see, quotas that evict the least recently read copies and
// say so when one is read, retention by last use, and stats. They run only
// against backends that implement store.Housekeeper.
var housekeepingTests = []struct {
	name string
	fn   func(t *testing.T, s store.Store, h store.Housekeeper)
}{
	{"Compressible", testCompressible},
	{"SmallCopiesCompressed", testSmallCopies},
	{"EvictLeastRecentlyRead", testEvictLRU},
	{"EvictOversizedCopyKept", testEvictOversized},
	{"EvictDBCapAcrossSessions", testEvictDBCap},
	{"EvictUnderConcurrentReads", testEvictConcurrentReads},
	{"GoneCopiesNotServedFromCache", testGoneNotCached},
	{"DeleteIdle", testDeleteIdle},
	{"CountIdleDeletesNothing", testCountIdle},
	{"MarkUsedSparesFromRetention", testMarkUsed},
	{"StatsSession", testStatsSession},
	{"ClaimRetention", testClaimRetention},
}

func runHousekeeping(t *testing.T, newStore func(t *testing.T) store.Store) {
	for _, tt := range housekeepingTests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			h, ok := s.(store.Housekeeper)
			if !ok {
				t.Skip("the store does not implement store.Housekeeper")
			}
			tt.fn(t, s, h)
		})
	}
}

// noise returns n bytes that do not compress, so that a copy's stored size
// is its size and quotas can be reasoned about exactly.
func noise(seed uint64, n int) []byte {
	r := rand.NewChaCha8([32]byte{byte(seed), byte(seed >> 8), byte(seed >> 16)})
	b := make([]byte, n)
	r.Read(b)
	return b
}

// logLines returns n bytes of a repetitive log, as test runners print.
func logLines(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "=== RUN   TestThing/case_%d\n--- PASS: TestThing/case_%d (0.%02ds) — ✓ ok\n", i, i, i%100)
	}
	return b.Bytes()[:n]
}

func stats(t *testing.T, h store.Housekeeper, session string) store.Stats {
	t.Helper()
	st, err := h.Stats(ctxT(t), session)
	if err != nil {
		t.Fatalf("Stats(%q): %v", session, err)
	}
	return st
}

// wantEvicted checks that reading id gives the evicted error, with a time,
// from StatCopy, ReadCopyAt and StatReadCopyAt.
func wantEvicted(t *testing.T, s store.Store, session, id string) {
	t.Helper()
	_, err := s.StatCopy(ctxT(t), session, id)
	var ee *store.EvictedError
	if !errors.Is(err, store.ErrEvicted) || !errors.As(err, &ee) || ee.At.IsZero() || ee.ID != id {
		t.Errorf("StatCopy(evicted %s): err = %v, want an *store.EvictedError with its id and time", id, err)
	}
	if errors.Is(err, store.ErrCopyNotFound) || errors.Is(err, store.ErrUnavailable) {
		t.Errorf("StatCopy(evicted %s): err = %v also matches ErrCopyNotFound or ErrUnavailable; evicted is its own kind", id, err)
	}
	if err != nil && !strings.Contains(err.Error(), "re-run") {
		t.Errorf("StatCopy(evicted %s): message %q does not say to re-run the source", id, err)
	}
	_, err = s.ReadCopyAt(ctxT(t), session, id, make([]byte, 10), 0)
	if !errors.Is(err, store.ErrEvicted) || errors.Is(err, store.ErrUnavailable) {
		t.Errorf("ReadCopyAt(evicted %s): err = %v, want ErrEvicted alone", id, err)
	}
	info, n, err := s.StatReadCopyAt(ctxT(t), session, id, make([]byte, 10), 0)
	if !errors.As(err, &ee) || ee.ID != id || errors.Is(err, store.ErrCopyNotFound) || errors.Is(err, store.ErrUnavailable) || n != 0 || info != (store.CopyInfo{}) {
		t.Errorf("StatReadCopyAt(evicted %s) = %+v, %d, %v; want a zero info and an *store.EvictedError alone", id, info, n, err)
	}
}

func wantReadable(t *testing.T, s store.Store, session string, info store.CopyInfo, data []byte) {
	t.Helper()
	if got := readAll(t, s, session, info.ID, info.TotalBytes, 4096); !bytes.Equal(got, data) {
		t.Errorf("copy %s read back wrong", info.ID)
	}
}

func testCompressible(t *testing.T, s store.Store, h store.Housekeeper) {
	sess := createSession(t, s, alice)
	text := logLines(5*store.ChunkSize + 1234)
	rnd := noise(1, 2*store.ChunkSize+77)
	mixed := append(append(append([]byte{}, text[:store.ChunkSize+500]...), rnd...), text[:3000]...)
	for _, data := range [][]byte{text, rnd, mixed} {
		info := saveCopy(t, s, sess.ID, store.CopyMeta{Complete: true}, data)
		if info.TotalBytes != int64(len(data)) {
			t.Fatalf("TotalBytes = %d, want %d (offsets count uncompressed bytes)", info.TotalBytes, len(data))
		}
		wantReadable(t, s, sess.ID, info, data)
		// Pages that straddle chunk boundaries, and odd sizes.
		for _, off := range []int64{0, 1, store.ChunkSize - 3, store.ChunkSize, 2*store.ChunkSize - 100, int64(len(data)) - 5} {
			for _, n := range []int{1, 7, 4096, 70000} {
				p := make([]byte, n)
				got, err := s.ReadCopyAt(ctxT(t), sess.ID, info.ID, p, off)
				want := min(int64(n), int64(len(data))-off)
				if int64(got) != want || (err != nil && err != io.EOF) || !bytes.Equal(p[:got], data[off:off+want]) {
					t.Fatalf("ReadCopyAt(off=%d, len=%d) = %d, %v; want %d bytes of the copy", off, n, got, err, want)
				}
			}
		}
	}
	st := stats(t, h, sess.ID)
	logical := int64(len(text) + len(rnd) + len(mixed))
	if st.LogicalBytes != logical {
		t.Errorf("Stats.LogicalBytes = %d, want %d", st.LogicalBytes, logical)
	}
	// The random bytes stay raw (stored as they are); the text shrinks.
	if min := int64(len(rnd)) * 2; st.StoredBytes < min || st.StoredBytes > logical/2 {
		t.Errorf("Stats.StoredBytes = %d of %d logical: want the text compressed and the random bytes raw (%d..%d)", st.StoredBytes, logical, min, logical/2)
	}
}

// testSmallCopies: the outputs people retain most, a little over a
// preview's budget to a few hundred KB, are stored compressed whatever
// their content, saved whole or while their command runs (a pending copy
// appended a chunk at a time), and read back byte for byte. The bounds are
// the issue's: `seq 1 100000` at most 0.45x its size (gzip -6 makes 0.37x,
// zstd -1 0.42x), a 100 KB go test log at most 0.3x.
func testSmallCopies(t *testing.T, s store.Store, h store.Housekeeper) {
	for _, c := range []struct {
		name string
		data []byte
		max  float64
	}{
		{"seq 1 100000", sample.Seq(588_895), 0.45},
		{"seq 1 20000", sample.Seq(108_894), 0.45},
		{"go test log, 100 KB", sample.GoTestLog(100_000), 0.3},
		{"go test log, 30 KB", sample.GoTestLog(30_000), 0.3},
		{"JSON export, 100 KB", sample.JSONExport(100_000), 0.3},
		{"seq 1 7000, just over a preview", sample.Seq(33_894), 0.45},
	} {
		for _, streamed := range []bool{false, true} {
			sess := createSession(t, s, alice)
			var info store.CopyInfo
			if st, ok := s.(store.Streamer); ok && streamed {
				info = saveStreamed(t, st, sess.ID, c.data)
			} else if streamed {
				continue
			} else {
				info = saveCopy(t, s, sess.ID, store.CopyMeta{Complete: true}, c.data)
			}
			wantReadable(t, s, sess.ID, info, c.data)
			st := stats(t, h, sess.ID)
			ratio := float64(st.StoredBytes) / float64(len(c.data))
			if st.LogicalBytes != int64(len(c.data)) || ratio > c.max {
				t.Errorf("%s (streamed %v): %d bytes stored in %d: %.3fx, want at most %.2fx", c.name, streamed, len(c.data), st.StoredBytes, ratio, c.max)
			}
		}
	}
}

// saveStreamed saves data as a command's capture does: its whole chunks
// appended to a pending copy, the rest given to Finish.
func saveStreamed(t *testing.T, st store.Streamer, session string, data []byte) store.CopyInfo {
	t.Helper()
	p, err := st.BeginCopy(ctxT(t), session)
	if err != nil {
		t.Fatal(err)
	}
	n := len(data) / store.ChunkSize * store.ChunkSize
	for off := 0; off < n; off += 2 * store.ChunkSize {
		if err := p.Append(ctxT(t), data[off:min(n, off+2*store.ChunkSize)]); err != nil {
			t.Fatal(err)
		}
	}
	info, err := p.Finish(ctxT(t), store.CopyMeta{Complete: true}, bytes.NewReader(data[n:]))
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func testEvictLRU(t *testing.T, s store.Store, h store.Housekeeper) {
	const size = 100_000
	h.SetLimits(store.Limits{SessionQuota: 250_000})
	sess := createSession(t, s, alice)
	other := createSession(t, s, alice)
	keepOther := saveCopy(t, s, other.ID, store.CopyMeta{}, noise(9, size))
	var infos []store.CopyInfo
	var datas [][]byte
	for i := range 2 {
		datas = append(datas, noise(uint64(i), size))
		infos = append(infos, saveCopy(t, s, sess.ID, store.CopyMeta{Source: fmt.Sprint(i)}, datas[i]))
	}
	// Read the older copy: the newer one is now the least recently read.
	wantReadable(t, s, sess.ID, infos[0], datas[0])
	datas = append(datas, noise(2, size))
	infos = append(infos, saveCopy(t, s, sess.ID, store.CopyMeta{Source: "2"}, datas[2]))

	wantEvicted(t, s, sess.ID, infos[1].ID)
	wantReadable(t, s, sess.ID, infos[0], datas[0])
	wantReadable(t, s, sess.ID, infos[2], datas[2])
	wantReadable(t, s, other.ID, keepOther, noise(9, size)) // another session's quota is its own
	list, err := s.ListCopies(ctxT(t), sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Errorf("ListCopies after eviction: %d copies, want 2", len(list))
	}
	// Its owner finds where it was, to say it was evicted.
	if got, err := s.CopySession(ctxT(t), alice, infos[1].ID); err != nil || got != sess.ID {
		t.Errorf("CopySession(evicted id) = %q, %v; want %s", got, err, sess.ID)
	}
	if _, err := s.CopySession(ctxT(t), bob, infos[1].ID); !errors.Is(err, store.ErrCopyNotFound) || errors.Is(err, store.ErrEvicted) {
		t.Errorf("CopySession(evicted id, another owner) = %v, want not found", err)
	}
	// Another session never learns of the eviction: the id is not its own.
	_, err = s.StatCopy(ctxT(t), other.ID, infos[1].ID)
	wantErr(t, "StatCopy(evicted id, other session)", err, store.ErrCopyNotFound)
	if errors.Is(err, store.ErrEvicted) {
		t.Errorf("StatCopy(evicted id, other session) = %v: reveals the other session's eviction", err)
	}
	if st := stats(t, h, sess.ID); st.Evictions != 1 || st.StoredBytes > 250_000 {
		t.Errorf("session stats = %+v, want 1 eviction and at most 250000 stored bytes", st)
	}
	if st := stats(t, h, ""); st.Evictions != 1 {
		t.Errorf("database stats: %d evictions, want 1", st.Evictions)
	}
}

func testEvictOversized(t *testing.T, s store.Store, h store.Housekeeper) {
	h.SetLimits(store.Limits{SessionQuota: 50_000})
	sess := createSession(t, s, alice)
	small := saveCopy(t, s, sess.ID, store.CopyMeta{}, noise(1, 20_000))
	big := noise(2, 3*store.ChunkSize)
	info := saveCopy(t, s, sess.ID, store.CopyMeta{}, big)
	wantReadable(t, s, sess.ID, info, big)
	wantEvicted(t, s, sess.ID, small.ID)
	// Saving again evicts the oversized copy, never the one being saved.
	again := saveCopy(t, s, sess.ID, store.CopyMeta{}, big)
	wantEvicted(t, s, sess.ID, info.ID)
	wantReadable(t, s, sess.ID, again, big)
}

func testEvictDBCap(t *testing.T, s store.Store, h store.Housekeeper) {
	const size = 100_000
	h.SetLimits(store.Limits{DBCap: 250_000})
	a, b := createSession(t, s, alice), createSession(t, s, bob)
	a1 := saveCopy(t, s, a.ID, store.CopyMeta{}, noise(1, size))
	b1 := saveCopy(t, s, b.ID, store.CopyMeta{}, noise(2, size))
	b2 := saveCopy(t, s, b.ID, store.CopyMeta{}, noise(3, size)) // over the cap: a1 is the least recently read
	wantEvicted(t, s, a.ID, a1.ID)
	wantReadable(t, s, b.ID, b1, noise(2, size))
	wantReadable(t, s, b.ID, b2, noise(3, size))
	if st := stats(t, h, ""); st.StoredBytes > 250_000 || st.Evictions != 1 || st.Sessions != 2 {
		t.Errorf("stats = %+v, want at most 250000 stored bytes, 1 eviction, 2 sessions", st)
	}
}

// testEvictConcurrentReads reads pages of copies while saves evict them:
// every read gives the whole page, right, or the evicted error; never a
// torn page, never another error.
func testEvictConcurrentReads(t *testing.T, s store.Store, h store.Housekeeper) {
	const size = 3 * store.ChunkSize
	h.SetLimits(store.Limits{SessionQuota: 4 * size})
	sess := createSession(t, s, alice)
	type saved struct {
		info store.CopyInfo
		data []byte
	}
	var (
		mu      sync.Mutex
		all     []saved
		done    atomic.Bool
		evicted atomic.Int64
		wg      sync.WaitGroup
	)
	add := func(i int) {
		data := noise(uint64(i), size)
		if i%2 == 0 {
			data = logLines(size) // compressed chunks too
			data[0] = byte('a' + i%26)
		}
		info, err := s.SaveCopy(ctxT(t), sess.ID, store.CopyMeta{}, bytes.NewReader(data))
		if err != nil {
			t.Errorf("SaveCopy: %v", err)
			return
		}
		mu.Lock()
		all = append(all, saved{info, data})
		mu.Unlock()
	}
	add(0)
	for r := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 7))
			p := make([]byte, 4096)
			for !done.Load() {
				mu.Lock()
				c := all[rng.IntN(len(all))]
				mu.Unlock()
				off := rng.Int64N(size - 4096)
				n, err := s.ReadCopyAt(ctxT(t), sess.ID, c.info.ID, p, off)
				switch {
				case errors.Is(err, store.ErrEvicted):
					evicted.Add(1)
				case err != nil:
					t.Errorf("ReadCopyAt(%s, %d): %v", c.info.ID, off, err)
					return
				case n != len(p) || !bytes.Equal(p, c.data[off:off+4096]):
					t.Errorf("ReadCopyAt(%s, %d): a torn or wrong page (%d bytes)", c.info.ID, off, n)
					return
				}
			}
		})
	}
	for i := 1; i < 16 && !t.Failed(); i++ {
		add(i)
	}
	done.Store(true)
	wg.Wait()
	if st := stats(t, h, sess.ID); st.StoredBytes > 4*size || st.Evictions == 0 {
		t.Errorf("stats after the saves = %+v, want evictions and at most %d stored bytes", st, 4*size)
	}
}

// testGoneNotCached reads compressed copies whole, so that a backend that
// keeps decompressed chunks has them, then makes each copy unreadable in
// each way there is: another session asks for it, its session is deleted
// or retired, it is evicted. Every read then gets the error, never the
// bytes.
func testGoneNotCached(t *testing.T, s store.Store, h store.Housekeeper) {
	data := logLines(3*store.ChunkSize + 100)
	h.SetLimits(store.Limits{SessionQuota: int64(len(data)) * 4})
	read := func(sess string) store.CopyInfo {
		t.Helper()
		info := saveCopy(t, s, sess, store.CopyMeta{}, data)
		wantReadable(t, s, sess, info, data)
		return info
	}
	a, other := createSession(t, s, alice), createSession(t, s, alice)
	inA := read(a.ID)
	checkNotVisible(t, s, other.ID, inA.ID)
	if err := s.DeleteSession(ctxT(t), alice, a.ID); err != nil {
		t.Fatal(err)
	}
	checkNotVisible(t, s, a.ID, inA.ID)

	idle := createSession(t, s, bob)
	inIdle := read(idle.ID)
	time.Sleep(10 * time.Millisecond) // order the clock readings, not a timing assertion
	if gone, err := h.DeleteIdle(ctxT(t), time.Now()); err != nil || gone.Sessions < 1 {
		t.Fatalf("DeleteIdle = %+v, %v", gone, err)
	}
	checkNotVisible(t, s, idle.ID, inIdle.ID)

	b := createSession(t, s, alice)
	first := read(b.ID)
	h.SetLimits(store.Limits{SessionQuota: int64(len(data))})
	saveCopy(t, s, b.ID, store.CopyMeta{}, noise(1, len(data)))
	wantEvicted(t, s, b.ID, first.ID)
}

func testDeleteIdle(t *testing.T, s store.Store, h store.Housekeeper) {
	idle := createSession(t, s, alice)
	idleCopy := saveCopy(t, s, idle.ID, store.CopyMeta{}, []byte("old\n"))
	busy := createSession(t, s, bob)
	time.Sleep(20 * time.Millisecond) // order the clock readings, not a timing assertion
	cutoff := time.Now()
	time.Sleep(20 * time.Millisecond)
	info := saveCopy(t, s, busy.ID, store.CopyMeta{}, []byte("new\n"))

	idleStats := stats(t, h, idle.ID)
	gone, err := h.DeleteIdle(ctxT(t), cutoff)
	if want := (store.Idle{Sessions: 1, Copies: 1, LogicalBytes: 4, StoredBytes: idleStats.StoredBytes}); err != nil || gone != want {
		t.Fatalf("DeleteIdle = %+v, %v; want %+v: the idle session and its copy", gone, err, want)
	}
	_, err = s.GetSession(ctxT(t), alice, idle.ID)
	wantErr(t, "GetSession(idle, deleted)", err, store.ErrSessionNotFound)
	_, err = s.StatCopy(ctxT(t), idle.ID, idleCopy.ID)
	wantErr(t, "StatCopy(copy of an idle session)", err, store.ErrCopyNotFound)
	got, err := s.GetSession(ctxT(t), bob, busy.ID)
	if err != nil {
		t.Fatalf("GetSession(busy): %v", err)
	}
	if !got.LastUsedAt.After(cutoff) {
		t.Errorf("busy session LastUsedAt = %v, want after %v (its last save)", got.LastUsedAt, cutoff)
	}
	wantReadable(t, s, busy.ID, info, []byte("new\n"))
	if st := stats(t, h, ""); st.RetentionDeletions != 1 || st.Sessions != 1 {
		t.Errorf("stats = %+v, want 1 retention deletion and 1 session left", st)
	}
	if gone, err := h.DeleteIdle(ctxT(t), cutoff); err != nil || gone != (store.Idle{}) {
		t.Errorf("DeleteIdle again = %+v, %v; want nothing deleted", gone, err)
	}
}

// CountIdle says what DeleteIdle with the same cutoff then deletes —
// sessions of any owner, with their copies and bytes, a session without
// copies included — and changes nothing itself: the copies stay readable,
// the sessions' last use and the counters stay as they were, and asking
// again gives the same answer. A read noted after the cutoff (not yet
// written down) spares its session, as it does from DeleteIdle.
func testCountIdle(t *testing.T, s store.Store, h store.Housekeeper) {
	idle := createSession(t, s, alice)
	small := saveCopy(t, s, idle.ID, store.CopyMeta{}, []byte("old\n"))
	bigData := noise(3, 3*store.ChunkSize+10)
	big := saveCopy(t, s, idle.ID, store.CopyMeta{}, bigData)
	empty := createSession(t, s, bob)
	readLater := createSession(t, s, alice)
	readCopy := saveCopy(t, s, readLater.ID, store.CopyMeta{}, []byte("read after the cutoff\n"))
	time.Sleep(20 * time.Millisecond) // order the clock readings, not a timing assertion
	cutoff := time.Now()
	time.Sleep(20 * time.Millisecond)
	busy := createSession(t, s, bob)
	saveCopy(t, s, busy.ID, store.CopyMeta{}, []byte("new\n"))
	if _, err := s.ReadCopyAt(ctxT(t), readLater.ID, readCopy.ID, make([]byte, 4), 0); err != nil {
		t.Fatalf("ReadCopyAt: %v", err)
	}

	idleStats := stats(t, h, idle.ID)
	before := stats(t, h, "")
	want := store.Idle{Sessions: 2, Copies: 2, LogicalBytes: int64(4 + len(bigData)), StoredBytes: idleStats.StoredBytes}
	for i := range 2 {
		got, err := h.CountIdle(ctxT(t), cutoff)
		if err != nil || got != want {
			t.Fatalf("CountIdle #%d = %+v, %v; want %+v", i+1, got, err, want)
		}
	}
	after := stats(t, h, "")
	if after.Sessions != before.Sessions || after.Copies != before.Copies || after.LogicalBytes != before.LogicalBytes ||
		after.StoredBytes != before.StoredBytes || after.RetentionDeletions != before.RetentionDeletions || after.Evictions != before.Evictions {
		t.Errorf("stats after CountIdle = %+v, before %+v: it must change nothing", after, before)
	}
	wantReadable(t, s, idle.ID, small, []byte("old\n"))
	wantReadable(t, s, idle.ID, big, bigData)
	// Reading the idle session's copies above is a use: count from before it.
	got, err := s.GetSession(ctxT(t), bob, empty.ID)
	if err != nil || !got.LastUsedAt.Before(cutoff) {
		t.Errorf("GetSession(idle, counted) = %+v, %v; want it kept, last used before the cutoff", got, err)
	}

	// What DeleteIdle deletes is what CountIdle said, once the reads made
	// since are left out: empty is still idle, idle was read just now.
	gone, err := h.DeleteIdle(ctxT(t), cutoff)
	if err != nil || gone != (store.Idle{Sessions: 1}) {
		t.Fatalf("DeleteIdle = %+v, %v; want 1 session (the empty one; the others were read) and no copy", gone, err)
	}
	if got, err := h.CountIdle(ctxT(t), cutoff); err != nil || got != (store.Idle{}) {
		t.Errorf("CountIdle after DeleteIdle = %+v, %v; want nothing", got, err)
	}

	// Without reads between, the count and the deletion agree exactly:
	// every session left is idle at a cutoff of now.
	saveCopy(t, s, createSession(t, s, alice).ID, store.CopyMeta{}, noise(4, store.ChunkSize+1))
	time.Sleep(20 * time.Millisecond)
	cutoff = time.Now()
	before = stats(t, h, "")
	counted, err := h.CountIdle(ctxT(t), cutoff)
	if err != nil || counted.Sessions != before.Sessions || counted.Copies != before.Copies ||
		counted.LogicalBytes != before.LogicalBytes || counted.StoredBytes != before.StoredBytes {
		t.Fatalf("CountIdle(now) = %+v, %v; want everything the store holds, %+v", counted, err, before)
	}
	if gone, err := h.DeleteIdle(ctxT(t), cutoff); err != nil || gone != counted {
		t.Errorf("DeleteIdle = %+v, %v; want %+v, as CountIdle said", gone, err, counted)
	}
	if after := stats(t, h, ""); after.Sessions != 0 || after.Copies != 0 {
		t.Errorf("stats after DeleteIdle(now) = %+v, want nothing left", after)
	}
}

// MarkUsed moves the sessions' last use to now, whoever owns them, so that
// retention with a cutoff before that keeps them; unknown and repeated ids
// are skipped, and an empty list does nothing.
func testMarkUsed(t *testing.T, s store.Store, h store.Housekeeper) {
	held := createSession(t, s, alice)
	heldByBob := createSession(t, s, bob)
	idle := createSession(t, s, alice)
	time.Sleep(20 * time.Millisecond) // order the clock readings, not a timing assertion
	cutoff := time.Now()
	time.Sleep(20 * time.Millisecond)
	if err := h.MarkUsed(ctxT(t), nil); err != nil {
		t.Fatalf("MarkUsed(nil): %v", err)
	}
	if err := h.MarkUsed(ctxT(t), []string{held.ID, store.NewID(store.SessionPrefix), heldByBob.ID, held.ID, "../etc"}); err != nil {
		t.Fatalf("MarkUsed: %v", err)
	}
	gone, err := h.DeleteIdle(ctxT(t), cutoff)
	if err != nil || gone.Sessions != 1 {
		t.Fatalf("DeleteIdle = %+v, %v; want 1 session (the one nobody marked)", gone, err)
	}
	_, err = s.GetSession(ctxT(t), alice, idle.ID)
	wantErr(t, "GetSession(idle)", err, store.ErrSessionNotFound)
	for _, k := range []struct {
		owner string
		s     store.Session
	}{{alice, held}, {bob, heldByBob}} {
		got, err := s.GetSession(ctxT(t), k.owner, k.s.ID)
		if err != nil {
			t.Errorf("GetSession(marked %s): %v", k.s.ID, err)
			continue
		}
		if !got.LastUsedAt.After(cutoff) {
			t.Errorf("marked session LastUsedAt = %v, want after %v", got.LastUsedAt, cutoff)
		}
	}
}

func testStatsSession(t *testing.T, s store.Store, h store.Housekeeper) {
	sess := createSession(t, s, alice)
	createSession(t, s, bob)
	saveCopy(t, s, sess.ID, store.CopyMeta{}, []byte("hello\n"))
	saveCopy(t, s, sess.ID, store.CopyMeta{}, []byte("world\n!"))
	st := stats(t, h, sess.ID)
	if st.Session != sess.ID || st.Copies != 2 || st.LogicalBytes != 13 || st.StoredBytes != 13 || st.Sessions != 1 {
		t.Errorf("Stats(session) = %+v, want 2 copies, 13 logical and stored bytes", st)
	}
	if all := stats(t, h, ""); all.Sessions != 2 || all.Copies != 2 || all.FileBytes <= 0 {
		t.Errorf("Stats() = %+v, want 2 sessions, 2 copies, a database size", all)
	}
	_, err := h.Stats(ctxT(t), store.NewID(store.SessionPrefix))
	wantErr(t, "Stats(unknown session)", err, store.ErrSessionNotFound)
	_, err = h.Stats(ctxT(t), "../etc")
	wantErr(t, "Stats(bad id)", err, store.ErrSessionNotFound)
}

// A retention pass is due once per interval: the first claim holds until
// the interval has passed, a claim after now (a clock set back) does not
// hold, of concurrent claims exactly one wins, and claiming changes no
// counter that stats report.
func testClaimRetention(t *testing.T, s store.Store, h store.Housekeeper) {
	c, ok := s.(store.RetentionClaimer)
	if !ok {
		t.Skip("the store does not implement store.RetentionClaimer")
	}
	before := stats(t, h, "")
	const day = 24 * time.Hour
	t0 := time.Now()
	for _, step := range []struct {
		at   time.Duration // after t0
		want bool
		why  string
	}{
		{0, true, "the first claim"},
		{0, false, "the same time again"},
		{time.Hour, false, "an hour later"},
		{day - time.Nanosecond, false, "just under a day later"},
		{day, true, "a day later"},
		{day + time.Hour, false, "an hour after that"},
		{time.Hour, true, "with the clock set back before the latest claim"},
		{2 * time.Hour, false, "an hour after that"},
	} {
		got, err := c.ClaimRetention(ctxT(t), t0.Add(step.at), day)
		if err != nil || got != step.want {
			t.Fatalf("%s: ClaimRetention = %v, %v; want %v", step.why, got, err, step.want)
		}
	}
	later := t0.Add(10 * day)
	var wins atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ok, err := c.ClaimRetention(ctxT(t), later, day)
			if err != nil {
				t.Error(err)
			}
			if ok {
				wins.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Errorf("%d of 8 concurrent claims won, want 1", n)
	}
	after := stats(t, h, "")
	if after.Evictions != before.Evictions || after.RetentionDeletions != before.RetentionDeletions || after.Sessions != before.Sessions {
		t.Errorf("stats after claims = %+v, want as before: %+v", after, before)
	}
}
