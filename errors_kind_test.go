package scrollback_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/filepager"
	"github.com/scrollback-dev/scrollback/grep"
	"github.com/scrollback-dev/scrollback/preview"
	"github.com/scrollback-dev/scrollback/runner"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// TestSentinelsAcrossPackages: every package's bad-input sentinel is the
// root's sentinel of its kind for errors.Is, wrapped or not, and ErrorKind
// names the kind.
func TestSentinelsAcrossPackages(t *testing.T) {
	for _, tc := range []struct {
		err  error
		root error
		kind string
	}{
		{filepager.ErrOffset, scrollback.ErrOffset, scrollback.KindOffset},
		{filepager.ErrSplit, scrollback.ErrOffset, scrollback.KindOffset},
		{filepager.ErrLine, scrollback.ErrOffset, scrollback.KindOffset},
		{filepager.ErrSensitive, scrollback.ErrSensitive, scrollback.KindSensitive},
		{filepager.ErrNotFound, scrollback.ErrNotFound, scrollback.KindNotFound},
		{filepager.ErrInvalid, scrollback.ErrArgument, scrollback.KindArgument},
		{filepager.ErrBinary, scrollback.ErrArgument, scrollback.KindArgument},
		{filepager.ErrIsDir, scrollback.ErrArgument, scrollback.KindArgument},
		{filepager.ErrOutsideRoot, scrollback.ErrArgument, scrollback.KindArgument},
		{filepager.ErrLoop, scrollback.ErrArgument, scrollback.KindArgument},
		{filepager.ErrSize, scrollback.ErrArgument, scrollback.KindArgument},
		{store.ErrOffset, scrollback.ErrOffset, scrollback.KindOffset},
		{store.ErrCopyNotFound, scrollback.ErrNotFound, scrollback.KindNotFound},
		{store.ErrSessionNotFound, scrollback.ErrNotFound, scrollback.KindNotFound},
		{store.ErrEvicted, scrollback.ErrEvicted, scrollback.KindEvicted},
		{store.ErrFull, scrollback.ErrUnavailable, scrollback.KindUnavailable},
		{store.ErrNewerSchema, scrollback.ErrUnavailable, scrollback.KindUnavailable},
		{sqlite.ErrBusy, scrollback.ErrUnavailable, scrollback.KindUnavailable},
		{scrollback.ErrNoOutput, scrollback.ErrNotFound, scrollback.KindNotFound},
		{scrollback.ErrNoSession, scrollback.ErrNotFound, scrollback.KindNotFound},
		{scrollback.ErrLimit, scrollback.ErrArgument, scrollback.KindArgument},
		{runner.ErrCommand, scrollback.ErrArgument, scrollback.KindArgument},
		{runner.ErrDir, scrollback.ErrArgument, scrollback.KindArgument},
		{runner.ErrEnv, scrollback.ErrArgument, scrollback.KindArgument},
		{runner.ErrTimeout, scrollback.ErrArgument, scrollback.KindArgument},
		{grep.ErrOption, scrollback.ErrArgument, scrollback.KindArgument},
		{preview.ErrSize, scrollback.ErrArgument, scrollback.KindArgument},
		{preview.ErrLines, scrollback.ErrArgument, scrollback.KindArgument},
		{context.DeadlineExceeded, nil, scrollback.KindUnavailable},
		{errors.New("validating \"arguments\": missing id"), nil, scrollback.KindArgument},
	} {
		for _, err := range []error{tc.err, fmt.Errorf("wrapped: %w", tc.err), &scrollback.Error{Op: "op", Err: tc.err, Msg: "m"}} {
			if tc.root != nil && !errors.Is(err, tc.root) {
				t.Errorf("errors.Is(%v, %v) = false", err, tc.root)
			}
			if got := scrollback.ErrorKind(err); got != tc.kind {
				t.Errorf("ErrorKind(%v) = %q, want %q", err, got, tc.kind)
			}
		}
	}
	if scrollback.ErrorKind(nil) != "" {
		t.Error("a nil error has a kind")
	}
	if errors.Is(filepager.ErrOffset, scrollback.ErrArgument) || errors.Is(store.ErrCopyNotFound, scrollback.ErrUnavailable) {
		t.Error("a sentinel matches a kind not its own")
	}
}

// TestErrorKindsFromEngine: the engine's own failures, and those of a real
// store, reach ErrorKind with the kind the contract gives them.
func TestErrorKindsFromEngine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(filepath.Join(dir, "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("é\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "id_rsa"), []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	eng := scrollback.New(st, scrollback.Options{})
	sess, err := eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	offsetErr := func() error {
		_, err := sess.ReadFile(ctx, scrollback.ReadFileInput{Path: filepath.Join(dir, "f.txt"), ByteOffset: ptr(int64(1))})
		return err
	}
	for _, tc := range []struct {
		name string
		err  func() error
		is   error
		kind string
	}{
		{"unknown output", func() error {
			_, err := sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: "out_aaaaaaaaaaaaaaaaaaaaaaaaaa"})
			return err
		}, scrollback.ErrNoOutput, scrollback.KindNotFound},
		{"unknown session", func() error { _, err := eng.Session(ctx, scrollback.LocalOwner, "s_nope"); return err }, scrollback.ErrNoSession, scrollback.KindNotFound},
		{"file offset inside a character", offsetErr, scrollback.ErrOffset, scrollback.KindOffset},
		{"sensitive file", func() error {
			_, err := sess.ReadFile(ctx, scrollback.ReadFileInput{Path: filepath.Join(dir, "id_rsa")})
			return err
		}, scrollback.ErrSensitive, scrollback.KindSensitive},
		{"empty command", func() error { _, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: " "}); return err }, scrollback.ErrArgument, scrollback.KindArgument},
	} {
		err := tc.err()
		if !errors.Is(err, tc.is) || scrollback.ErrorKind(err) != tc.kind {
			t.Errorf("%s: err %v (is %v: %v), kind %q, want %q", tc.name, err, tc.is, errors.Is(err, tc.is), scrollback.ErrorKind(err), tc.kind)
		}
	}
	st.Close()
	_, err = sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: "out_aaaaaaaaaaaaaaaaaaaaaaaaaa"})
	if !errors.Is(err, scrollback.ErrUnavailable) || scrollback.ErrorKind(err) != scrollback.KindUnavailable {
		t.Errorf("closed store: %v, kind %q", err, scrollback.ErrorKind(err))
	}
}

func ptr[T any](v T) *T { return &v }

// evictingStore is a real store whose copies all read as evicted under a
// quota, as a backend with eviction reports them.
type evictingStore struct{ store.Store }

func (evictingStore) StatCopy(ctx context.Context, session, id string) (store.CopyInfo, error) {
	return store.CopyInfo{}, fmt.Errorf("copy %s was evicted on 2026-01-02 15:04 UTC: %w", id, store.ErrEvicted)
}

func (evictingStore) StatReadCopyAt(ctx context.Context, session, id string, p []byte, off int64) (store.CopyInfo, int, error) {
	return store.CopyInfo{}, 0, fmt.Errorf("copy %s was evicted on 2026-01-02 15:04 UTC: %w", id, store.ErrEvicted)
}

// TestEvicted: reading an evicted copy is ErrEvicted, of kind "evicted",
// says when, and says to re-run the source.
func TestEvicted(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess, err := scrollback.New(evictingStore{st}, scrollback.Options{}).NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: "out_aaaaaaaaaaaaaaaaaaaaaaaaaa"})
	if !errors.Is(err, scrollback.ErrEvicted) || scrollback.ErrorKind(err) != scrollback.KindEvicted ||
		!strings.Contains(err.Error(), "2026-01-02 15:04") || !strings.Contains(err.Error(), "re-run") {
		t.Errorf("evicted copy: %v (kind %q)", err, scrollback.ErrorKind(err))
	}
}

// A path with a NUL byte (a JSON \u0000 escape) is refused by name, with
// the byte quoted: before, the message carried the raw NUL inside
// "open ...: lstat: invalid argument".
func TestReadFileNULInPath(t *testing.T) {
	_, err := scrollback.New(nil, scrollback.Options{}).ReadFile(context.Background(), scrollback.ReadFileInput{Path: "/etc/passwd\x00x"})
	if !errors.Is(err, scrollback.ErrArgument) || !strings.Contains(err.Error(), `"/etc/passwd\x00x" holds a NUL byte at byte 11`) || strings.ContainsRune(err.Error(), 0) {
		t.Errorf("err = %q", err)
	}
}

// TestCancelledCallIsUnavailable: a call cut short by its context is an
// *Error of kind "unavailable", and errors.Is finds that kind's sentinel,
// ErrUnavailable, as for every other kind (the contract: "in Go as the
// sentinel that errors.Is finds"), beside context.Canceled or
// context.DeadlineExceeded. Before, ErrorKind said "unavailable" while
// errors.Is(err, ErrUnavailable) was false.
func TestCancelledCallIsUnavailable(t *testing.T) {
	ctx := context.Background()
	sess := newSession(t, scrollback.Options{})
	eng := sess.Engine()
	res, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "seq 1 20000"})
	if err != nil || res.OutputID == "" {
		t.Fatalf("RunCommand: %v, id %q", err, res.OutputID)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	expired, cancel2 := context.WithDeadline(ctx, time.Unix(1, 0))
	defer cancel2()
	for _, c := range []struct {
		name  string
		ctx   context.Context
		cause error
	}{{"cancelled", cancelled, context.Canceled}, {"deadline", expired, context.DeadlineExceeded}} {
		for _, tc := range []struct {
			name string
			call func(ctx context.Context) error
		}{
			{"NewSession", func(ctx context.Context) error { _, err := eng.NewSession(ctx, scrollback.LocalOwner); return err }},
			{"Session", func(ctx context.Context) error {
				_, err := eng.Session(ctx, scrollback.LocalOwner, sess.ID())
				return err
			}},
			{"ForkSession", func(ctx context.Context) error {
				_, err := eng.ForkSession(ctx, scrollback.LocalOwner, sess.ID())
				return err
			}},
			{"ListSessions", func(ctx context.Context) error { _, err := eng.ListSessions(ctx, scrollback.LocalOwner); return err }},
			{"DeleteSession", func(ctx context.Context) error { return eng.DeleteSession(ctx, scrollback.LocalOwner, sess.ID()) }},
			{"RunCommand", func(ctx context.Context) error {
				_, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "echo hi"})
				return err
			}},
			{"ReadToolOutput", func(ctx context.Context) error {
				_, err := sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: res.OutputID})
				return err
			}},
			{"GrepToolOutput", func(ctx context.Context) error {
				_, err := sess.GrepToolOutput(ctx, scrollback.GrepInput{ID: res.OutputID, Pattern: "1"})
				return err
			}},
			{"QueryToolOutput", func(ctx context.Context) error {
				_, err := sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: res.OutputID, Filter: "."})
				return err
			}},
			{"Copies", func(ctx context.Context) error { _, err := sess.Copies(ctx); return err }},
		} {
			err := tc.call(c.ctx)
			var se *scrollback.Error
			if !errors.As(err, &se) || !errors.Is(err, c.cause) || !errors.Is(err, scrollback.ErrUnavailable) ||
				scrollback.ErrorKind(err) != scrollback.KindUnavailable {
				t.Errorf("%s %s: %v (*Error %v, is %v %v, is ErrUnavailable %v, kind %q); want an *Error of kind unavailable that errors.Is finds as ErrUnavailable and %v",
					c.name, tc.name, err, errors.As(err, &se), c.cause, errors.Is(err, c.cause), errors.Is(err, scrollback.ErrUnavailable), scrollback.ErrorKind(err), c.cause)
			}
		}
	}
	// A cancelled call is not mistaken for any other kind.
	err = &scrollback.Error{Op: "op", Err: context.Canceled}
	for _, other := range []error{scrollback.ErrNotFound, scrollback.ErrEvicted, scrollback.ErrOffset, scrollback.ErrArgument, scrollback.ErrSensitive} {
		if errors.Is(err, other) {
			t.Errorf("a cancelled call matches %v", other)
		}
	}
	if errors.Is(&scrollback.Error{Op: "op", Err: scrollback.ErrArgument}, scrollback.ErrUnavailable) {
		t.Error("an argument error matches ErrUnavailable")
	}
}
