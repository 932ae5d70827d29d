package sqlite_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/store"
)

const size8MiB = 8 << 20

// BenchmarkSaveCopy8MiB saves one 8 MiB copy per iteration (target: a median
// of at most 100 ms). Sessions are deleted as it goes so the file stays small.
func BenchmarkSaveCopy8MiB(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "bench.db"), nil)
	ctx := context.Background()
	data := payload(1, size8MiB)
	b.SetBytes(size8MiB)
	b.ReportAllocs()
	var sess store.Session
	var elapsed time.Duration
	n := 0
	for b.Loop() {
		b.StopTimer()
		if n%4 == 0 {
			if sess.ID != "" {
				db.DeleteSession(ctx, "bench", sess.ID)
			}
			sess, _ = db.CreateSession(ctx, "bench")
		}
		b.StartTimer()
		start := time.Now()
		if _, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{Tool: "bench"}, bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		n++
	}
	b.ReportMetric(float64(elapsed.Milliseconds())/float64(n), "ms/op")
}

// BenchmarkReadPage4KiB reads random 4 KiB pages of an 8 MiB copy through
// ReadCopyAt (target: a median of at most 100 µs).
func BenchmarkReadPage4KiB(b *testing.B) {
	db := open(b, filepath.Join(b.TempDir(), "bench.db"), nil)
	ctx := context.Background()
	sess, _ := db.CreateSession(ctx, "bench")
	info, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(payload(2, size8MiB)))
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	p := make([]byte, 4096)
	b.SetBytes(4096)
	b.ReportAllocs()
	for b.Loop() {
		off := r.Int64N(info.TotalBytes - 4096)
		if n, err := db.ReadCopyAt(ctx, sess.ID, info.ID, p, off); n != len(p) || err != nil {
			b.Fatalf("ReadCopyAt(%d) = %d, %v", off, n, err)
		}
	}
}
