package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

func TestParseSize(t *testing.T) {
	good := []struct {
		in   string
		want int64
	}{
		{"0", 0}, {"1024", 1024}, {"512MiB", 512 << 20}, {"4GiB", 4 << 30}, {"100KiB", 100 << 10},
		{"1TiB", 1 << 40}, {"10B", 10}, {"2KB", 2000}, {"3MB", 3e6}, {"1GB", 1e9}, {"64M", 64 << 20},
		{" 8GiB ", 8 << 30}, {"0GiB", 0},
	}
	for _, c := range good {
		if got, err := ParseSize(c.in); err != nil || got != c.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "-1", "12XB", "1.5GiB", "GiB", "+5", "5 5MiB", "MiB5", "99999999999TiB", "1e9", "0x10", "-0"} {
		_, err := ParseSize(in)
		if err == nil {
			t.Errorf("ParseSize(%q) succeeded; want an error", in)
		} else if !strings.Contains(err.Error(), "size") {
			t.Errorf("ParseSize(%q) error %q does not say what a size is", in, err)
		}
	}
	if _, err := ParseSize("12XB"); err == nil || !strings.Contains(err.Error(), "512MiB, 4GiB or 0") {
		t.Errorf("ParseSize(12XB) error %v does not name the accepted forms", err)
	}
}

func TestParseRetention(t *testing.T) {
	for in, want := range map[string]time.Duration{"0": 0, "30d": 30 * 24 * time.Hour, "36h": 36 * time.Hour, "90m": 90 * time.Minute, "1d": 24 * time.Hour} {
		if got, err := ParseRetention(in); err != nil || got != want {
			t.Errorf("ParseRetention(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "soon", "-1d", "-5h", "1.5d", "d", "+3d", "999999999999d"} {
		if _, err := ParseRetention(in); err == nil {
			t.Errorf("ParseRetention(%q) succeeded; want an error", in)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 900: "900B", 1024: "1KiB", 512 << 20: "512MiB", 3 << 29: "1.5GiB", 4 << 30: "4GiB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"0", "512MiB", "4GiB", "12XB", "-1", "1KB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %d: negative", s, n)
		}
	})
}

// syncBuffer is a bytes.Buffer safe for the retention goroutine to write
// while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// say is a startRetention reporter writing one line per message.
func (s *syncBuffer) say(_ slog.Level, msg string) { fmt.Fprintln(s, msg) }

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The servers' background retention deletes idle sessions without being
// asked, and stop waits for it.
func TestStartRetention(t *testing.T) {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "r.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := t.Context()
	idle, _ := db.CreateSession(ctx, "me")
	time.Sleep(5 * time.Millisecond) // the session is now idle for longer than the period
	var log syncBuffer
	stop := startRetention(ctx, db, time.Millisecond, log.say, nil)
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(log.String(), "deleted 1 session"); {
		if time.Now().After(deadline) {
			t.Fatalf("background retention did not run; log %q", log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	if _, err := db.GetSession(ctx, "me", idle.ID); !errors.Is(err, store.ErrSessionNotFound) {
		t.Errorf("GetSession(idle) = %v, want deleted", err)
	}
	// Retention 0 starts nothing.
	startRetention(ctx, db, 0, log.say, nil)()
}

// countingStore counts the retention passes made on a real database, and
// can hold a pass until released.
type countingStore struct {
	*sqlite.DB
	passes atomic.Int64
	hold   chan struct{} // each pass waits until it is closed

	mu      sync.Mutex
	marks   [][]string // the sessions of each MarkUsed call
	markErr error      // what MarkUsed returns, when not nil
}

func (c *countingStore) MarkUsed(ctx context.Context, sessions []string) error {
	c.mu.Lock()
	c.marks = append(c.marks, sessions)
	err := c.markErr
	c.mu.Unlock()
	if err != nil {
		return err
	}
	return c.DB.MarkUsed(ctx, sessions)
}

func (c *countingStore) markCalls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.marks)
}

func (c *countingStore) DeleteIdle(ctx context.Context, cutoff time.Time) (store.Idle, error) {
	c.passes.Add(1)
	select {
	case <-c.hold:
	case <-ctx.Done():
		return store.Idle{}, ctx.Err()
	}
	return c.DB.DeleteIdle(ctx, cutoff)
}

// Retention runs once at start and then once an hour, never more often,
// in fake time (testing/synctest); a pass under way holds up neither the
// server's start nor its calls.
func TestStartRetentionHourly(t *testing.T) {
	// The zstd encoder is made once per process, with channels of its
	// own: make it outside the bubble, where later tests use it too.
	warm, err := sqlite.Open(filepath.Join(t.TempDir(), "warm.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := warm.CreateSession(t.Context(), "me")
	if _, err := warm.SaveCopy(t.Context(), ws.ID, store.CopyMeta{}, strings.NewReader("hi\n")); err != nil {
		t.Fatal(err)
	}
	warm.Close()
	synctest.Test(t, func(t *testing.T) {
		db, err := sqlite.Open(filepath.Join(t.TempDir(), "r.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		c := &countingStore{DB: db, hold: make(chan struct{})}
		stop := startRetention(t.Context(), c, 24*time.Hour, func(slog.Level, string) {}, nil)
		synctest.Wait()
		if n := c.passes.Load(); n != 1 {
			t.Fatalf("%d passes at start, want 1", n)
		}
		// The first pass is held: the store still serves calls.
		s, err := db.CreateSession(t.Context(), "me")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SaveCopy(t.Context(), s.ID, store.CopyMeta{}, strings.NewReader("hi\n")); err != nil {
			t.Fatalf("SaveCopy during a retention pass: %v", err)
		}
		close(c.hold) // and every later pass goes straight through
		for _, step := range []struct {
			wait time.Duration
			want int64
		}{
			{59 * time.Minute, 1},
			{2 * time.Minute, 2},
			{30 * time.Minute, 2},
			{10 * time.Hour, 12},
		} {
			time.Sleep(step.wait)
			synctest.Wait()
			if n := c.passes.Load(); n != step.want {
				t.Fatalf("after %v more: %d passes, want %d", step.wait, n, step.want)
			}
		}
		stop()
	})
}

// `scrollback mcp` applies retention in the background: a session idle
// past the period is deleted while the server answers a real MCP client,
// and the server's own session is kept.
func TestMCPServerRetention(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	idle, err := db.CreateSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	ageSessions(t, path, 2*time.Hour, idle.ID) // past the server's period of one

	cs, stderr, stop := stdioMCP(t, path, "--retention", "1h")
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	waitRetention(t, stderr)
	if !strings.Contains(stderr.String(), "retention: deleted 1 session") {
		t.Errorf("stderr %q, want 1 session deleted", stderr.String())
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("ListTools after the retention pass: %v", err)
	}
	stop()

	db, err = sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.GetSession(ctx, scrollback.LocalOwner, idle.ID); !errors.Is(err, store.ErrSessionNotFound) {
		t.Errorf("GetSession(idle) = %v, want deleted", err)
	}
	if list, err := db.ListSessions(ctx, scrollback.LocalOwner); err != nil || len(list) != 1 {
		t.Errorf("ListSessions = %d sessions, %v; want the server's own", len(list), err)
	}
}

// A long-running server never deletes the session its own client holds,
// however long that client stays idle: `scrollback mcp --session HELD
// --retention 1h` with HELD and another session both two hours idle
// deletes the other and keeps HELD, which the client goes on using.
func TestMCPServerRetentionKeepsHeldSession(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "m.db")
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	held, err := db.CreateSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	other, err := db.CreateSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	ageSessions(t, path, 2*time.Hour, held.ID, other.ID)

	cs, stderr, stop := stdioMCP(t, path, "--retention", "1h", "--session", held.ID)
	waitRetention(t, stderr)
	if !strings.Contains(stderr.String(), "retention: deleted 1 session") {
		t.Errorf("stderr %q, want exactly 1 session deleted (the idle one nobody holds)", stderr.String())
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "seq 1 200000"}})
	if err != nil {
		t.Fatalf("run_command after the retention pass: %v", err)
	}
	if res.IsError {
		t.Errorf("run_command after the retention pass failed: %+v", res.Content)
	}
	stop()

	db, err = sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.GetSession(ctx, scrollback.LocalOwner, other.ID); !errors.Is(err, store.ErrSessionNotFound) {
		t.Errorf("GetSession(other) = %v, want deleted", err)
	}
	if list, err := db.ListCopies(ctx, held.ID); err != nil || len(list) != 1 {
		t.Errorf("held session: %d copies, %v; want the one run_command saved after the pass", len(list), err)
	}
}

// stdioMCP runs `scrollback mcp args...` over pipes on the SQLite database
// at path, connected to an MCP client. stop closes the client and fails
// the test unless the server then exits 0.
func stdioMCP(t *testing.T, path string, args ...string) (cs *mcp.ClientSession, stderr *syncBuffer, stop func()) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr = &syncBuffer{}
	env := map[string]string{"SCROLLBACK_DB": path, "HOME": t.TempDir()}
	done := make(chan int, 1)
	go func() {
		done <- Main(t.Context(), append([]string{"mcp"}, args...),
			IO{Stdin: inR, Stdout: outW, Stderr: stderr, Getenv: func(k string) string { return env[k] }})
		outW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs, stderr, func() {
		t.Helper()
		cs.Close()
		if code := <-done; code != 0 {
			t.Fatalf("mcp exited %d; stderr %q", code, stderr.String())
		}
	}
}

// waitRetention waits for a server's first retention pass to say what
// it deleted.
func waitRetention(t *testing.T, stderr *syncBuffer) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(stderr.String(), "retention: deleted"); {
		if time.Now().After(deadline) {
			t.Fatalf("the server did not apply retention; stderr %q", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// ageSessions makes the sessions of the SQLite database at path last used
// d ago.
func ageSessions(t *testing.T, path string, d time.Duration, ids ...string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	for _, id := range ids {
		if _, err := raw.Exec(`UPDATE sessions SET last_used_at = ? WHERE id = ?`, time.Now().Add(-d).UnixNano(), id); err != nil {
			t.Fatal(err)
		}
	}
}

// warmEncoder saves one copy in a throwaway database, so that the
// compressor's one-time set-up runs outside a synctest bubble.
func warmEncoder(t *testing.T) {
	t.Helper()
	warm, err := sqlite.Open(filepath.Join(t.TempDir(), "warm.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := warm.CreateSession(t.Context(), "me")
	warm.SaveCopy(t.Context(), ws.ID, store.CopyMeta{}, strings.NewReader("hi\n"))
	warm.Close()
}

// heldSessionStore opens a database (closed when the test ends) with one
// session, the one a connected client holds, behind a countingStore whose
// marks are not held back.
func heldSessionStore(t *testing.T) (*sqlite.DB, *countingStore, store.Session) {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "r.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	held, err := db.CreateSession(t.Context(), "me")
	if err != nil {
		t.Fatal(err)
	}
	c := &countingStore{DB: db, hold: make(chan struct{})}
	close(c.hold)
	return db, c, held
}

// With a period shorter than two hours, the sessions clients hold are
// marked used every half period (so that another instance's pass spares
// them too), while retention itself still runs once an hour, each pass
// after a mark; a pass whose mark failed is skipped, not run blind.
func TestStartRetentionMarksLiveSessions(t *testing.T) {
	warmEncoder(t)
	synctest.Test(t, func(t *testing.T) {
		db, c, held := heldSessionStore(t)
		var log syncBuffer
		stop := startRetention(t.Context(), c, time.Hour, log.say, func() []string { return []string{held.ID} })
		for _, step := range []struct {
			wait          time.Duration
			marks, passes int64
		}{
			{0, 1, 1},
			{29 * time.Minute, 1, 1},
			{2 * time.Minute, 2, 1},
			{30 * time.Minute, 3, 2},
			{3 * time.Hour, 9, 5},
		} {
			time.Sleep(step.wait)
			synctest.Wait()
			if m, p := int64(c.markCalls()), c.passes.Load(); m != step.marks || p != step.passes {
				t.Fatalf("after %v more: %d marks, %d passes; want %d, %d", step.wait, m, p, step.marks, step.passes)
			}
		}
		// Four hours on, the held session, idle all along, is still there.
		if _, err := db.GetSession(t.Context(), "me", held.ID); err != nil {
			t.Errorf("held session after four hours of hourly passes with a 1h period: %v", err)
		}
		c.mu.Lock()
		c.markErr = errors.New("database away")
		c.mu.Unlock()
		time.Sleep(time.Hour) // the next pass is due, but its mark fails
		synctest.Wait()
		if m, p := c.markCalls(), c.passes.Load(); m != 11 || p != 5 {
			t.Errorf("%d marks, %d passes after failed marks, want 11 marks and still 5 passes", m, p)
		}
		if !strings.Contains(log.String(), "database away") {
			t.Errorf("the failed mark was not logged: %q", log.String())
		}
		stop()
	})
}

// Over HTTP too: `scrollback mcp --http` keeps the session of a connected
// client that has gone idle past the period, and deletes an idle session
// nobody holds. Passes run every second here (housekeepingInterval).
func TestMCPHTTPRetentionKeepsHeldSession(t *testing.T) {
	defer func(d time.Duration) { housekeepingInterval = d }(housekeepingInterval)
	housekeepingInterval = time.Second
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	path := filepath.Join(t.TempDir(), "h.db")
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	var stderr syncBuffer
	env := map[string]string{"SCROLLBACK_DB": path, "HOME": t.TempDir()}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"mcp", "--http", "127.0.0.1:0", "--retention", "1h"},
			IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(k string) string { return env[k] }})
	}()
	var url string
	for deadline := time.Now().Add(30 * time.Second); url == ""; time.Sleep(5 * time.Millisecond) {
		if i := strings.Index(stderr.String(), "http://"); i >= 0 {
			if j := strings.Index(stderr.String()[i:], " "); j > 0 {
				url = stderr.String()[i : i+j]
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not start; stderr %q", stderr.String())
		}
	}
	// An MCP session (2025-11-25) holds its scrollback session; a request
	// of 2026-07-28 holds none, and its default session lives by its use.
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "seq 1 200000"}})
	if err != nil || res.IsError {
		t.Fatalf("run_command: %v %+v", err, res)
	}
	held, _ := res.Meta["scrollback/session"].(string)
	var rc scrollback.RunCommandResult
	if b, err := json.Marshal(res.StructuredContent); err != nil || json.Unmarshal(b, &rc) != nil || rc.OutputID == "" || held == "" {
		t.Fatalf("no session or copy in %+v", res)
	}
	// Another session, nobody's; then both made two hours idle.
	db, err = sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := db.CreateSession(ctx, scrollback.LocalOwner)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	ageSessions(t, path, 2*time.Hour, held, other.ID)

	waitRetention(t, &stderr)
	if !strings.Contains(stderr.String(), "retention: deleted 1 session") {
		t.Errorf("stderr %q, want exactly 1 session deleted (the one nobody holds)", stderr.String())
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_tool_output", Arguments: map[string]any{"id": rc.OutputID, "limit": 2}})
	if err != nil || res.IsError {
		t.Errorf("read_tool_output of the held session's copy after the pass: %v %+v", err, res)
	}
	cs.Close()
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("mcp exited %d; stderr %q", code, stderr.String())
	}
}

// A server that keeps sessions forever (--retention 0) runs no pass of its
// own, but still marks its clients' sessions used every hour, so that
// `scrollback gc` or another instance with a period of its own (of two
// hours or more) spares a connected client however long it stays idle.
func TestStartRetentionZeroMarksLiveSessions(t *testing.T) {
	warmEncoder(t)
	synctest.Test(t, func(t *testing.T) {
		db, c, held := heldSessionStore(t)
		var log syncBuffer
		stop := startRetention(t.Context(), c, 0, log.say, func() []string { return []string{held.ID} })
		for _, step := range []struct {
			wait  time.Duration
			marks int
		}{
			{0, 1},
			{59 * time.Minute, 1},
			{2 * time.Minute, 2},
			{3 * time.Hour, 5},
		} {
			time.Sleep(step.wait)
			synctest.Wait()
			if m, p := c.markCalls(), c.passes.Load(); m != step.marks || p != 0 {
				t.Fatalf("after %v more: %d marks, %d passes; want %d marks and no pass", step.wait, m, p, step.marks)
			}
		}
		// Another process's gc with a two-hour period spares the session.
		if gone, err := db.DeleteIdle(t.Context(), time.Now().Add(-2*time.Hour)); err != nil || gone.Sessions != 0 {
			t.Errorf("gc --retention 2h beside a server with --retention 0: deleted %+v, %v; want the held session spared", gone, err)
		}
		stop()
	})
}

// stats shows the copies a killed `scrollback run` left pending, and the
// space they take, instead of a database size no copy accounts for.
func TestStatsPending(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	db, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := db.CreateSession(t.Context(), "me")
	p, err := db.BeginCopy(t.Context(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Append(t.Context(), bytes.Repeat([]byte("x"), store.ChunkSize)); err != nil {
		t.Fatal(err)
	}
	db.Close() // as a process killed mid-save leaves it
	env := map[string]string{"SCROLLBACK_DB": path, "HOME": t.TempDir()}
	code, out, errOut := cliRun(t, env, "stats")
	if code != 0 || !regexp.MustCompile(`(?m)^pending copies +1 \([0-9.]+[KMG]?i?B stored\): .*died mid-save`).MatchString(out) {
		t.Errorf("stats: exit %d, %q, %q; want a line for the pending copy", code, out, errOut)
	}
	code, out, _ = cliRun(t, env, "stats", "--json")
	if code != 0 || !strings.Contains(out, `"pendingCopies": 1,`) || !strings.Contains(out, `"pendingStoredBytes": `) {
		t.Errorf("stats --json: exit %d, %s; want pendingCopies and pendingStoredBytes", code, out)
	}
}

// stats names its database; a PostgreSQL URL's password is never shown.
func TestShownTarget(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"/home/u/.local/state/scrollback/scrollback.db", "/home/u/.local/state/scrollback/scrollback.db"},
		{"postgres://sb:s3cret@db.example:5432/scrollback?sslmode=require", "postgres://sb:xxxxx@db.example:5432/scrollback?sslmode=require"},
		{"postgresql://sb@db.example/scrollback", "postgresql://sb@db.example/scrollback"},
		{"postgres://sb:s3cret@[::1", "a PostgreSQL database (its URL does not parse)"},
	} {
		if got := shownTarget(tt.in); got != tt.want || strings.Contains(got, "s3cret") {
			t.Errorf("shownTarget(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
