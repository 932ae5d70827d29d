package postgres

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/internal/sample"
)

// TestReadsCountForOtherInstances: an instance that only reads has its
// reads written down within readFlushEvery, without a save or a Close of
// its own, so that another instance's eviction takes the copy it reads
// last, not first (see the SQLite test of the same name). The interval is
// not 0, so that the one read is not due when made: it must be written
// down once it has waited, with no later read to find it due.
func TestReadsCountForOtherInstances(t *testing.T) {
	old := readFlushEvery
	readFlushEvery = 20 * time.Millisecond
	defer func() { readFlushEvery = old }()
	u := newDatabase(t)
	writer, reader := openTest(t, u), openTest(t, u)
	ctx := t.Context()
	sess := mustSession(t, writer, "me")
	save := func(seed int) store.CopyInfo {
		info, err := writer.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(sample.Letters(seed, 100_000)))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // distinct times
		return info
	}
	paged, other := save(1), save(2)
	p := make([]byte, 4096)
	if _, err := reader.ReadCopyAt(ctx, sess.ID, paged.ID, p, 8192); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); count(t, writer,
		"SELECT count(*) FROM copies WHERE id = $1 AND last_read_at > (SELECT last_read_at FROM copies WHERE id = $2)", paged.ID, other.ID) != 1; {
		if time.Now().After(deadline) {
			t.Fatal("the reader's read is not written down without a save or a Close of its own")
		}
		time.Sleep(10 * time.Millisecond)
	}
	var stored int64
	if err := writer.pool.QueryRow(ctx, "SELECT sum(stored_bytes) FROM copies").Scan(&stored); err != nil {
		t.Fatal(err)
	}
	writer.SetLimits(store.Limits{SessionQuota: stored + stored/4})
	save(3)
	if _, err := writer.StatCopy(ctx, sess.ID, other.ID); !errors.Is(err, store.ErrEvicted) {
		t.Errorf("the copy nobody read: %v; want it evicted", err)
	}
	if _, err := reader.StatCopy(ctx, sess.ID, paged.ID); err != nil {
		t.Errorf("the copy being paged through: %v; want it kept", err)
	}
}
