package scrollback_test

import (
	crand "crypto/rand"
	"encoding/base64"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/postgres"
	"github.com/scrollback-dev/scrollback/store/postgres/pgtest"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// TestEvictionThroughTheAPI: through the Go API and a real store (SQLite,
// and PostgreSQL: the test server pgtest names), a quota
// evicts the least recently read copy; reading it, by every reader, is
// ErrEvicted of kind "evicted", saying when and that the source must be
// re-run; another session, a fork and the session once deleted get
// ErrNotFound for it, never ErrEvicted.
func TestEvictionThroughTheAPI(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(filepath.Join(t.TempDir(), "scrollback.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		testEvictionThroughTheAPI(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		st, err := postgres.Open(t.Context(), newPostgresDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		testEvictionThroughTheAPI(t, st)
	})
}

func testEvictionThroughTheAPI(t *testing.T, st store.Store) {
	ctx := t.Context()
	h := st.(store.Housekeeper)
	eng := scrollback.New(st, scrollback.Options{})
	s1, err := eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	retain := func() string {
		raw := make([]byte, 150_000)
		crand.Read(raw) // incompressible, so that stored bytes are known to grow
		shown := s1.Retain(ctx, scrollback.RetainInput{Tool: "t", Data: []byte(base64.StdEncoding.EncodeToString(raw)), Complete: true})
		if shown.OutputID == "" {
			t.Fatalf("no copy retained: %+v", shown.ShownCopy)
		}
		return shown.OutputID
	}
	read := func(s *scrollback.Session, id string) error {
		_, err := s.ReadToolOutput(ctx, scrollback.ReadInput{ID: id})
		return err
	}
	a, b := retain(), retain()
	stats, err := h.Stats(ctx, s1.ID())
	if err != nil {
		t.Fatal(err)
	}
	h.SetLimits(store.Limits{SessionQuota: stats.StoredBytes + stats.StoredBytes/4})
	if err := read(s1, a); err != nil { // a is now read after b
		t.Fatal(err)
	}
	c := retain()

	for _, id := range []string{a, c} {
		if err := read(s1, id); err != nil {
			t.Errorf("read %s (recently read or new): %v; want it kept", id, err)
		}
	}
	when := regexp.MustCompile(`20[0-9]{2}-[0-9]{2}-[0-9]{2}`)
	for name, call := range map[string]func() error{
		"read_tool_output": func() error { return read(s1, b) },
		"grep_tool_output": func() error {
			_, err := s1.GrepToolOutput(ctx, scrollback.GrepInput{ID: b, Pattern: "A"})
			return err
		},
		"query_tool_output": func() error {
			_, err := s1.QueryToolOutput(ctx, scrollback.QueryInput{ID: b, Filter: "."})
			return err
		},
	} {
		err := call()
		if !errors.Is(err, scrollback.ErrEvicted) || errors.Is(err, scrollback.ErrNotFound) || scrollback.ErrorKind(err) != scrollback.KindEvicted {
			t.Errorf("%s of the copy nobody read: %v (kind %q); want ErrEvicted only", name, err, scrollback.ErrorKind(err))
			continue
		}
		if msg := err.Error(); !when.MatchString(msg) || !strings.Contains(msg, "re-run") {
			t.Errorf("%s of the evicted copy: %q; want when it was evicted and that its source must be re-run", name, msg)
		}
	}
	stats, err = h.Stats(ctx, s1.ID())
	if err != nil {
		t.Fatal(err)
	}
	if stats.Copies != 2 || stats.Evictions != 1 {
		t.Errorf("session stats after the eviction: %d copies, %d evictions; want 2, 1", stats.Copies, stats.Evictions)
	}

	notFound := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, scrollback.ErrNotFound) || errors.Is(err, scrollback.ErrEvicted) || scrollback.ErrorKind(err) != scrollback.KindNotFound {
			t.Errorf("%s: %v (kind %q); want ErrNotFound, existence elsewhere not revealed", what, err, scrollback.ErrorKind(err))
		}
	}
	notFound("the evicted copy from another session", read(s2, b))
	fork, err := eng.ForkSession(ctx, scrollback.LocalOwner, s1.ID())
	if err != nil {
		t.Fatal(err)
	}
	notFound("the evicted copy from a fork", read(fork, b))
	notFound("a kept copy from a fork", read(fork, a))
	if err := eng.DeleteSession(ctx, scrollback.LocalOwner, s1.ID()); err != nil {
		t.Fatal(err)
	}
	notFound("the evicted copy once its session is deleted", read(s1, b))
	notFound("a kept copy once its session is deleted", read(s1, a))
}

// newPostgresDatabase creates an empty database on the PostgreSQL test
// server (pgtest), dropped when the test ends, and returns its URL.
func newPostgresDatabase(t *testing.T) string { return pgtest.Database(t) }
