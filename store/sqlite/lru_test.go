package sqlite_test

import (
	"bytes"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// TestReadsCountForOtherProcesses: a process that only reads (a stdio MCP
// server paging through a copy) has its reads written down within
// readFlushEvery, without a save or a Close of its own, so that another
// process's eviction takes the copy it reads last, not first. Its reads
// were written down only with its next save or at its Close: the copy a
// client was paging through at that moment was evicted as the least
// recently read.
//
// The interval is not 0: a single read, with no read or write after it,
// must still be written down once it has waited. It was written only when
// a later read found it due, so a server that read a copy once and then
// waited for its client kept that read to itself until it closed (the
// interval 0 hid it: every read was due at once).
func TestReadsCountForOtherProcesses(t *testing.T) {
	defer sqlite.SetReadFlushEvery(20 * time.Millisecond)()
	path := filepath.Join(t.TempDir(), "lru.db")
	writer := open(t, path, &sqlite.Options{RawChunks: true})
	reader := open(t, path, nil)
	ctx := t.Context()
	sess, err := writer.CreateSession(ctx, "me")
	if err != nil {
		t.Fatal(err)
	}
	save := func(seed int) store.CopyInfo {
		info, err := writer.SaveCopy(ctx, sess.ID, store.CopyMeta{}, bytes.NewReader(payload(seed, 100_000)))
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
	time.Sleep(2 * time.Millisecond)
	// The write is in the background: wait for it, as another process
	// would by coming later.
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var n int
		if err := raw.QueryRow(`SELECT count(*) FROM copies WHERE id = ? AND last_read_at > (SELECT last_read_at FROM copies WHERE id = ?)`,
			paged.ID, other.ID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reader's read is not written down without a save or a Close of its own")
		}
		time.Sleep(10 * time.Millisecond)
	}
	writer.SetLimits(store.Limits{SessionQuota: 250_000})
	save(3)
	if _, err := writer.StatCopy(ctx, sess.ID, other.ID); !errors.Is(err, store.ErrEvicted) {
		t.Errorf("the copy nobody read: %v; want it evicted", err)
	}
	if _, err := reader.StatCopy(ctx, sess.ID, paged.ID); err != nil {
		t.Errorf("the copy being paged through: %v; want it kept", err)
	}
}
