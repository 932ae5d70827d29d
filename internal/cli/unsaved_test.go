//go:build unix

package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

var errLocked = errors.New("database is locked")

// lockedSaves is a SQLite store whose saves fail as a database locked
// past its busy timeout does: a pending copy begins and takes its chunks,
// but cannot be finished, and the whole save that follows fails midway.
type lockedSaves struct {
	*sqlite.DB
	begun bool
}

func (l *lockedSaves) SaveCopy(_ context.Context, _ string, _ store.CopyMeta, r io.Reader) (store.CopyInfo, error) {
	io.CopyN(io.Discard, r, 1000) // a save that read a little, then failed
	return store.CopyInfo{}, errLocked
}

func (l *lockedSaves) BeginCopy(ctx context.Context, session string) (store.PendingCopy, error) {
	p, err := l.DB.BeginCopy(ctx, session)
	l.begun = l.begun || err == nil
	return lockedPending{p}, err
}

type lockedPending struct{ store.PendingCopy }

func (lockedPending) Finish(context.Context, store.CopyMeta, io.Reader) (store.CopyInfo, error) {
	return store.CopyInfo{}, errLocked
}

// TestKeptStore: an output the store fails to save, after it took part of
// it as a pending copy, is kept whole in a file (keptStore), and the
// wrapper still lets the engine spill (store.Streamer), which it asks
// for by type assertion.
func TestKeptStore(t *testing.T) {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "s.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	locked := &lockedSaves{DB: db}
	dir := t.TempDir()
	st, kept := keepUnsaved(locked, dir, io.Discard)
	if _, ok := st.(store.Streamer); !ok {
		t.Fatal("keepUnsaved hid the store's BeginCopy (store.Streamer)")
	}
	sess, err := scrollback.New(st, scrollback.Options{}).NewSession(t.Context(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	// An output of a few chunks, written in two parts so that the first
	// settles and is spilled before the command ends.
	part := strings.Repeat("0123456789abcdef\n", 2*store.ChunkSize/17+1)
	f := filepath.Join(t.TempDir(), "part")
	if err := os.WriteFile(f, []byte(part), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := sess.RunCommand(t.Context(), scrollback.RunCommandInput{Args: []string{"sh", "-c", `cat "$1"; sleep 0.5; cat "$1"`, "sh", f}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Recovery != scrollback.RecoveryUnavailable {
		t.Fatalf("recovery %q, want unavailable", res.Recovery)
	}
	if !locked.begun {
		// The machine was too busy to spill before the command ended.
		t.Log("no pending copy was begun: this run did not cover a failed Finish")
	}
	if kept.path == "" {
		t.Fatalf("no file kept the output (%v)", kept.keepErr)
	}
	if filepath.Dir(kept.path) != dir {
		t.Errorf("kept in %s, want in %s", kept.path, dir)
	}
	got, err := os.ReadFile(kept.path)
	if err != nil {
		t.Fatal(err)
	}
	if want := part + part; string(got) != want {
		t.Errorf("kept %d bytes, want the whole output, %d bytes", len(got), len(want))
	}
	if fi, err := os.Stat(kept.path); err == nil && fi.Mode().Perm()&0o077 != 0 && os.PathSeparator == '/' {
		t.Errorf("kept file mode %v: others may read an output that may hold secrets", fi.Mode().Perm())
	}
	if note := kept.note(); !strings.Contains(note, kept.path) {
		t.Errorf("note %q does not name the file", note)
	}
}

// slowSaves is a store whose SaveCopy waits, as on a locked database,
// until run has said that it waits (or 10s have passed), then fails.
type slowSaves struct {
	unsavedStore
	stderr *syncBuffer
}

func (s slowSaves) SaveCopy(context.Context, string, store.CopyMeta, io.Reader) (store.CopyInfo, error) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if strings.Contains(s.stderr.String(), "still waiting") {
			break
		}
	}
	return store.CopyInfo{}, errLocked
}

// TestKeptStoreSaysItWaits: a save that waits on the database is said on
// stderr once, while it waits; run was silent for the tens of seconds a
// locked database took to refuse it.
func TestKeptStoreSaysItWaits(t *testing.T) {
	var stderr syncBuffer
	st, kept := keepUnsaved(slowSaves{unsavedStore{errLocked}, &stderr}, t.TempDir(), &stderr)
	kept.slowAfter = time.Millisecond
	for range 2 {
		if _, err := st.SaveCopy(t.Context(), "s", store.CopyMeta{}, strings.NewReader("output")); !errors.Is(err, errLocked) {
			t.Fatalf("SaveCopy: %v, want the store's error", err)
		}
	}
	if got := strings.Count(stderr.String(), "scrollback run: still waiting for the database to take the output"); got != 1 {
		t.Errorf("said %d times that it waits, want once:\n%s", got, stderr.String())
	}
	if kept.path == "" {
		t.Errorf("the output was not kept in a file (%v)", kept.keepErr)
	}
}

// TestKeptStoreNoteSaysWhatItHolds: the kept file holds the whole output
// only when the copy was complete; past the copy cap it is the head and
// tail, and the note does not call it the whole output.
func TestKeptStoreNoteSaysWhatItHolds(t *testing.T) {
	for _, complete := range []bool{true, false} {
		_, kept := keepUnsaved(unsavedStore{errLocked}, t.TempDir(), io.Discard)
		if _, err := kept.SaveCopy(t.Context(), "s", store.CopyMeta{Complete: complete}, strings.NewReader("head\n[gap]\ntail\n")); err == nil {
			t.Fatal("the save did not fail")
		}
		note := kept.note()
		if whole := strings.Contains(note, "the whole output"); whole != complete || !strings.Contains(note, kept.path) || !strings.Contains(note, "(16 bytes") {
			t.Errorf("complete=%v: note %q", complete, note)
		}
	}
}
