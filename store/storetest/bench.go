package storetest

import (
	"bytes"
	"context"
	"testing"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/internal/sample"
)

// BenchQuota300 saves 300 outputs of 2 MiB (random letters, which compress
// to about 60%) into one session, under a 256 MiB session quota, of a
// fresh store from newStore per iteration (it must implement
// store.Housekeeper). It reports what Stats says against the quota, the
// reference: stored/quota (at most 1, or the benchmark fails),
// database/quota right after the last save (the target: at most
// 1.10), peak-database/quota (the largest after any save: the bound holds
// throughout, not only at the end), the evictions, and the empty
// database's size (empty-MiB: PostgreSQL's catalogs, about 7.5 MiB, count
// in its database size). Nothing waits for background work to settle.
func BenchQuota300(b *testing.B, newStore func(b *testing.B) store.Store) {
	const quota = 256 << 20
	for b.Loop() {
		s := newStore(b)
		h, ok := s.(store.Housekeeper)
		if !ok {
			b.Skip("the store does not implement store.Housekeeper")
		}
		h.SetLimits(store.Limits{SessionQuota: quota})
		ctx := context.Background()
		empty, err := h.Stats(ctx, "")
		if err != nil {
			b.Fatal(err)
		}
		sess, err := s.CreateSession(ctx, "bench")
		if err != nil {
			b.Fatal(err)
		}
		var st store.Stats
		var peak int64
		for i := range 300 {
			if _, err := s.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(sample.Letters(i, 2<<20))); err != nil {
				b.Fatal(err)
			}
			if st, err = h.Stats(ctx, ""); err != nil {
				b.Fatal(err)
			}
			peak = max(peak, st.FileBytes)
		}
		if st.StoredBytes > quota {
			b.Fatalf("stored %d bytes, over the %d quota", st.StoredBytes, quota)
		}
		b.ReportMetric(float64(st.StoredBytes)/quota, "stored/quota")
		b.ReportMetric(float64(st.FileBytes)/quota, "database/quota")
		b.ReportMetric(float64(peak)/quota, "peak-database/quota")
		b.ReportMetric(float64(st.Evictions), "evictions")
		b.ReportMetric(float64(empty.FileBytes)/(1<<20), "empty-MiB")
	}
}
