package scrollback_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/filepager"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// TestEngineSessions: the engine lists, forks and deletes an owner's
// sessions; another owner's session reads exactly like a missing one
// (ErrNoSession, kind not_found), for every method; a fork shares no copies.
func TestEngineSessions(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng := scrollback.New(st, scrollback.Options{})

	a, err := eng.NewSession(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	big, err := a.RunCommand(ctx, scrollback.RunCommandInput{Command: "seq 100000"})
	if err != nil || big.OutputID == "" {
		t.Fatalf("run: %v, output %q", err, big.OutputID)
	}
	b, err := eng.NewSession(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}

	ss, err := eng.ListSessions(ctx, "alice")
	if err != nil || len(ss) != 1 || ss[0].ID != a.ID() || ss[0].Copies != 1 {
		t.Fatalf("ListSessions(alice) = %+v, %v; want only %s with its copy", ss, err, a.ID())
	}

	fork, err := eng.ForkSession(ctx, "alice", a.ID())
	if err != nil {
		t.Fatal(err)
	}
	if fork.Owner() != "alice" || fork.Info().Parent != a.ID() || fork.ID() == a.ID() {
		t.Errorf("fork %+v", fork.Info())
	}
	if _, err := fork.ReadToolOutput(ctx, scrollback.ReadInput{ID: big.OutputID}); !errors.Is(err, scrollback.ErrNoOutput) {
		t.Errorf("a fork reads its parent's copy: %v", err)
	}

	missing := "s_aaaaaaaaaaaaaaaaaaaaaaaaaa"
	for _, tc := range []struct {
		name string
		call func(id string) error
	}{
		{"Session", func(id string) error { _, err := eng.Session(ctx, "alice", id); return err }},
		{"ForkSession", func(id string) error { _, err := eng.ForkSession(ctx, "alice", id); return err }},
		{"DeleteSession", func(id string) error { return eng.DeleteSession(ctx, "alice", id) }},
	} {
		other, none := tc.call(b.ID()), tc.call(missing)
		for _, err := range []error{other, none} {
			if !errors.Is(err, scrollback.ErrNoSession) || scrollback.ErrorKind(err) != scrollback.KindNotFound {
				t.Errorf("%s: %v, want ErrNoSession", tc.name, err)
			}
		}
		if other != nil && none != nil && other.Error() != strings.Replace(none.Error(), missing, b.ID(), 1) {
			t.Errorf("%s: another owner's session %q reads unlike a missing one %q", tc.name, other, none)
		}
	}
	if _, err := eng.Session(ctx, "bob", b.ID()); err != nil {
		t.Errorf("bob's session is gone after alice tried to delete it: %v", err)
	}

	if err := eng.DeleteSession(ctx, "alice", a.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Session(ctx, "alice", a.ID()); !errors.Is(err, scrollback.ErrNoSession) {
		t.Errorf("a deleted session opens: %v", err)
	}
	if _, err := a.ReadToolOutput(ctx, scrollback.ReadInput{ID: big.OutputID}); !errors.Is(err, scrollback.ErrNoOutput) {
		t.Errorf("a deleted session's copy reads: %v", err)
	}
	ss, err = eng.ListSessions(ctx, "alice")
	if err != nil || len(ss) != 1 || ss[0].ID != fork.ID() {
		t.Errorf("after delete, ListSessions(alice) = %+v, %v; want only the fork", ss, err)
	}
}

// TestNewFillsDefaults: Options reports every default New documents.
func TestNewFillsDefaults(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	o := scrollback.New(st, scrollback.Options{}).Options()
	if o.PreviewBudget != scrollback.PreviewBudget || o.HistoryBudget != scrollback.HistoryBudget || o.File.PageBytes != scrollback.FilePageBytes ||
		o.Capture.Copy != scrollback.CopyCap || o.Capture.Stdout != 8<<20 || o.Capture.Stderr != 8<<20 || o.Capture.Tail != 2<<20 ||
		o.ShownBytes != scrollback.ShownBudget || o.QueryTimeout != scrollback.QueryTimeout || o.QueryMaxOutput != scrollback.QueryMaxOutput ||
		o.QueryMaxMemory != 512<<20 || o.File.MaxLines != 2000 {
		t.Errorf("defaults not filled in: %+v", o)
	}
}

// TestOptionsReportCapsInForce: Options reports the capture caps a
// command's capture applies, after New's defaults and capture's clamping,
// not the values passed in.
func TestOptionsReportCapsInForce(t *testing.T) {
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, in := range []capture.Limits{
		{},
		{Stdout: -1, Stderr: -5, Copy: -1, Tail: -1},
		{Copy: 100},
		{Copy: 1024, Tail: 1 << 20},
		{Copy: 4096, Tail: 4096},
		{Stdout: 1000, Stderr: 2000, Copy: 1 << 20, Tail: 1000},
	} {
		got := scrollback.New(st, scrollback.Options{Capture: in}).Options().Capture
		if want := capture.New(in).Limits(); got != want {
			t.Errorf("Options{Capture: %+v}.Capture = %+v; the capture applies %+v", in, got, want)
		}
	}
}

// TestOptionsDenyIsTheEngines: the deny patterns New is given are the
// engine's own: a caller changing its slice afterwards, or the slice
// Options returned, changes neither what read_file refuses nor what
// Options reports. Before, Options().File.Deny was the caller's slice, so
// it reported patterns that were not in force (the pager had copied them).
func TestOptionsDenyIsTheEngines(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "a.secret")
	if err := os.WriteFile(secret, []byte("hidden\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deny := []string{"*.secret", "*.key"}
	eng := scrollback.New(nil, scrollback.Options{File: filepager.Options{Deny: deny}})
	deny[0] = "*.nothing"
	eng.Options().File.Deny[1] = "*.nothing"
	if got := eng.Options().File.Deny; !slices.Equal(got, []string{"*.secret", "*.key"}) {
		t.Errorf("Options().File.Deny = %q after the caller changed its slices; want the patterns New was given", got)
	}
	if _, err := eng.ReadFile(context.Background(), scrollback.ReadFileInput{Path: secret}); !errors.Is(err, scrollback.ErrSensitive) {
		t.Errorf("ReadFile(%s) = %v; want it refused by the pattern New was given", secret, err)
	}
}
