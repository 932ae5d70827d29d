package scrollback_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// lockedStore is a database another process keeps locked: each save
// fails with store.ErrBusy (after the busy timeout, in life), counted.
// finishOnly lets BeginCopy and Append through, so that the save fails
// only when the pending copy is finished.
type lockedStore struct {
	*sqlite.DB
	finishOnly            bool
	begins, saves, finish atomic.Int32
}

var errLocked = fmt.Errorf("sqlite: save copy: %w (test.db); another process held the database lock too long; retry", store.ErrBusy)

func (l *lockedStore) SaveCopy(context.Context, string, store.CopyMeta, io.Reader) (store.CopyInfo, error) {
	l.saves.Add(1)
	return store.CopyInfo{}, errLocked
}

func (l *lockedStore) BeginCopy(ctx context.Context, session string) (store.PendingCopy, error) {
	l.begins.Add(1)
	if !l.finishOnly {
		return nil, errLocked
	}
	p, err := l.DB.BeginCopy(ctx, session)
	if err != nil {
		return nil, err
	}
	return lockedPending{p, l}, nil
}

type lockedPending struct {
	store.PendingCopy
	l *lockedStore
}

func (p lockedPending) Finish(context.Context, store.CopyMeta, io.Reader) (store.CopyInfo, error) {
	p.l.finish.Add(1)
	return store.CopyInfo{}, errLocked
}

// TestSaveWhileLockedNotRetried: a save that found the database locked
// past its busy timeout is reported at once (recovery unavailable, saying
// so), not tried again as a whole: each try waits the busy timeout again,
// and `scrollback run` on a locked database took four of them (40 s)
// before its result.
func TestSaveWhileLockedNotRetried(t *testing.T) {
	for _, finishOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("finishOnly=%v", finishOnly), func(t *testing.T) {
			ctx := context.Background()
			l := &lockedStore{DB: openSQLite(t, filepath.Join(t.TempDir(), "scrollback.db")), finishOnly: finishOnly}
			sess, err := scrollback.New(l, scrollback.Options{}).NewSession(ctx, "me")
			if err != nil {
				t.Fatal(err)
			}
			// Output past a chunk, then time for the spill to begin its copy.
			res, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "seq 200000; sleep 0.3"})
			if err != nil {
				t.Fatal(err)
			}
			if res.Recovery != scrollback.RecoveryUnavailable || !strings.Contains(res.RecoveryError, "database is locked") {
				t.Errorf("recovery %q (%s), want unavailable saying the database is locked", res.Recovery, res.RecoveryError)
			}
			if l.begins.Load() == 0 || finishOnly && l.finish.Load() == 0 {
				t.Skip("the command ended before its copy was begun: nothing to check")
			}
			if n := l.saves.Load(); n != 0 {
				t.Errorf("after the spill found the database locked, the copy was saved whole again %d times", n)
			}
		})
	}
}
