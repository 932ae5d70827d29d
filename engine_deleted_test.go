package scrollback_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// openSQLite opens the database at path, closed when the test ends.
func openSQLite(t testing.TB, path string) *sqlite.DB {
	t.Helper()
	st, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestSessionDeletedUnderHandle: a session deleted while a handle still
// uses it (`scrollback session rm` or retention in another process) is
// never revived, and the handle's next save moves it to a fresh session
// of the same owner, where the copy is saved and can be read, instead of
// every later save failing with "no such session".
func TestSessionDeletedUnderHandle(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "scrollback.db")
	eng := scrollback.New(openSQLite(t, path), scrollback.Options{})
	// Another process, on the same file, deletes the session.
	otherEng := scrollback.New(openSQLite(t, path), scrollback.Options{})

	a, err := eng.NewSession(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	gone := a.ID()
	first, err := a.RunCommand(ctx, scrollback.RunCommandInput{Command: "seq 100000"})
	if err != nil || first.OutputID == "" {
		t.Fatalf("run: %v, %+v", err, first.Recovery)
	}
	if err := otherEng.DeleteSession(ctx, "alice", gone); err != nil {
		t.Fatal(err)
	}

	// A command large enough to be spilled as it runs, and a result
	// saved in one piece.
	run, err := a.RunCommand(ctx, scrollback.RunCommandInput{Command: "seq 200000"})
	if err != nil {
		t.Fatal(err)
	}
	if run.Recovery != scrollback.RecoveryAvailable || run.OutputID == "" {
		t.Fatalf("after the session was deleted: recovery %q (%s), want available", run.Recovery, run.RecoveryError)
	}
	fresh := a.ID()
	if fresh == gone || a.Owner() != "alice" || a.Info().ID != fresh {
		t.Fatalf("the handle is on %s (owner %q), was %s: want a fresh session of alice", fresh, a.Owner(), gone)
	}
	shown := a.Retain(ctx, scrollback.RetainInput{Tool: "t", Data: []byte(strings.Repeat("x\n", 40000)), Complete: true})
	if shown.Recovery != scrollback.RecoveryAvailable || a.ID() != fresh {
		t.Errorf("Retain after the move: recovery %q, session %s; want available in %s", shown.Recovery, a.ID(), fresh)
	}
	p, err := a.ReadToolOutput(ctx, scrollback.ReadInput{ID: run.OutputID})
	if err != nil || !strings.HasPrefix(p.Text, "1\n2\n3\n") {
		t.Errorf("reading the copy saved after the move: %q, %v", p.Text[:min(len(p.Text), 20)], err)
	}
	// The deleted session stays deleted, its copy with it.
	if _, err := eng.Session(ctx, "alice", gone); !errors.Is(err, scrollback.ErrNoSession) {
		t.Errorf("the deleted session %s opens again: %v", gone, err)
	}
	if _, err := a.ReadToolOutput(ctx, scrollback.ReadInput{ID: first.OutputID}); !errors.Is(err, scrollback.ErrNoOutput) {
		t.Errorf("the deleted session's copy reads: %v", err)
	}
	ss, err := eng.ListSessions(ctx, "alice")
	if err != nil || len(ss) != 1 || ss[0].ID != fresh || ss[0].Copies != 2 {
		t.Errorf("alice's sessions = %+v, %v; want only %s, with 2 copies", ss, err, fresh)
	}

	// Saves that find the session deleted at once share one fresh session.
	if err := otherEng.DeleteSession(ctx, "alice", fresh); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			sh := a.Retain(ctx, scrollback.RetainInput{Tool: "t", Data: []byte(strings.Repeat("y\n", 20000)), Complete: true})
			if sh.Recovery != scrollback.RecoveryAvailable {
				t.Errorf("concurrent save: recovery %q (%s)", sh.Recovery, sh.RecoveryError)
			}
		})
	}
	wg.Wait()
	ss, err = eng.ListSessions(ctx, "alice")
	if err != nil || len(ss) != 1 || ss[0].ID != a.ID() || ss[0].Copies != 4 {
		t.Errorf("after concurrent saves, alice's sessions = %+v, %v; want one, %s, with 4 copies", ss, err, a.ID())
	}
}

// TestDefaultSessionDeletedUnderHandle: a handle on the owner's default
// session moves to the owner's next default session, the one every other
// process then finds.
func TestDefaultSessionDeletedUnderHandle(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, filepath.Join(t.TempDir(), "scrollback.db"))
	eng := scrollback.New(st, scrollback.Options{})
	d, err := eng.DefaultSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	gone := d.ID()
	if err := eng.DeleteSession(ctx, scrollback.LocalOwner, gone); err != nil {
		t.Fatal(err)
	}
	sh := d.Retain(ctx, scrollback.RetainInput{Tool: "t", Data: []byte(strings.Repeat("z\n", 40000)), Complete: true})
	if sh.Recovery != scrollback.RecoveryAvailable {
		t.Fatalf("recovery %q (%s), want available", sh.Recovery, sh.RecoveryError)
	}
	now, err := eng.DefaultSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	if d.ID() == gone || now.ID() != d.ID() {
		t.Errorf("the handle moved from %s to %s; the default session is now %s: want the handle on it", gone, d.ID(), now.ID())
	}
}

// noNewSessions is a store that cannot make sessions (a full disk, say).
type noNewSessions struct{ store.Store }

func (noNewSessions) CreateSession(context.Context, string) (store.Session, error) {
	return store.Session{}, errors.New("disk full")
}

// TestSessionDeletedNoFresh: when no fresh session can be made for a
// handle whose session was deleted, the result says both, and the handle
// stays where it was (the next save tries again).
func TestSessionDeletedNoFresh(t *testing.T) {
	ctx := context.Background()
	st := openSQLite(t, filepath.Join(t.TempDir(), "scrollback.db"))
	made, err := st.CreateSession(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	a, err := scrollback.New(noNewSessions{st}, scrollback.Options{}).Session(ctx, "alice", made.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteSession(ctx, "alice", made.ID); err != nil {
		t.Fatal(err)
	}
	sh := a.Retain(ctx, scrollback.RetainInput{Tool: "t", Data: []byte(strings.Repeat("x\n", 40000)), Complete: true})
	if sh.Recovery != scrollback.RecoveryUnavailable || !strings.Contains(sh.RecoveryError, "was deleted while in use") ||
		!strings.Contains(sh.RecoveryError, "disk full") || !strings.Contains(sh.Preview, "disk full") {
		t.Errorf("recovery %q (%s), want unavailable saying the session was deleted and why no fresh one", sh.Recovery, sh.RecoveryError)
	}
	if a.ID() != made.ID {
		t.Errorf("the handle moved to %s with no session made", a.ID())
	}
}
