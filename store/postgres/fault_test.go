package postgres

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/scrollback-dev/scrollback/store"
)

// A server that is not there fails Open at once with an error that names
// the server and says what to check. Needs no server.
func TestOpenUnavailable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	start := time.Now()
	_, err = Open(t.Context(), "postgres://scrollback@"+addr+"/scrollback?sslmode=disable")
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Open with no server: err = %v, want ErrUnavailable", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Op != "connect" {
		t.Fatalf("Open with no server: err = %#v, want an *Error for connect", err)
	}
	for _, want := range []string{addr + "/scrollback", "pg_isready", "running"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if d := time.Since(start); d > 20*time.Second { // a hang detector: nothing listens, so no wait is due
		t.Errorf("Open took %v to fail", d)
	}
}

func TestOpenBadURL(t *testing.T) {
	for _, u := range []string{"postgres://user:secret@host:notaport/db", "postgres://%zz"} {
		_, err := Open(t.Context(), u)
		if err == nil {
			t.Fatalf("Open(%q) succeeded", u)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("error for a bad URL shows the password: %v", err)
		}
		if !strings.Contains(err.Error(), "postgres://USER@HOST:PORT/DATABASE") {
			t.Errorf("error %q does not show the URL's shape", err)
		}
	}
}

// proxy forwards TCP connections to the test server and can be taken down
// and brought back, which is what a server restart looks like to a client:
// every connection breaks, new ones are refused, then accepted again.
type proxy struct {
	target, addr string
	mu           sync.Mutex
	ln           net.Listener
	conns        map[net.Conn]bool
}

func startProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{target: target, addr: ln.Addr().String(), conns: map[net.Conn]bool{}}
	p.serve(ln)
	t.Cleanup(p.down)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[s] = true, true
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
}

func (p *proxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *proxy) up(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("proxy back up on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

// viaProxy returns u with its host replaced by the proxy's address.
func viaProxy(t *testing.T, u string, p *proxy) string {
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	pu.Host = p.addr
	return pu.String()
}

// The database lost mid-session: calls fail with ErrUnavailable naming the
// server; once it is back, the same *DB serves again, and what was saved
// before is still there.
func TestConnectionLost(t *testing.T) {
	u := newDatabase(t)
	pu, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, pu.Host)
	db := openTest(t, viaProxy(t, u, p))
	ctx := t.Context()
	s := mustSession(t, db, "alice")
	info, err := db.SaveCopy(ctx, s.ID, store.CopyMeta{}, strings.NewReader("before the outage\n"))
	if err != nil {
		t.Fatal(err)
	}

	p.down()
	_, err = db.StatCopy(ctx, s.ID, info.ID)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), p.addr) {
		t.Errorf("StatCopy with the server down: err = %v, want ErrUnavailable naming %s", err, p.addr)
	}
	if _, err := db.SaveCopy(ctx, s.ID, store.CopyMeta{}, strings.NewReader("x")); !errors.Is(err, ErrUnavailable) {
		t.Errorf("SaveCopy with the server down: err = %v, want ErrUnavailable", err)
	}
	if _, err := db.CreateSession(ctx, "alice"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("CreateSession with the server down: err = %v, want ErrUnavailable", err)
	}

	p.up(t)
	st, err := db.StatCopy(ctx, s.ID, info.ID)
	if err != nil || st.TotalBytes != 18 {
		t.Fatalf("StatCopy once the server is back = %+v, %v", st, err)
	}
	if _, err := db.SaveCopy(ctx, s.ID, store.CopyMeta{}, strings.NewReader("after")); err != nil {
		t.Errorf("SaveCopy once the server is back: %v", err)
	}
	if list, err := db.ListCopies(ctx, s.ID); err != nil || len(list) != 2 {
		t.Errorf("ListCopies once the server is back = %d, %v; want 2", len(list), err)
	}
}

// The server ends every connection (an administrator, a failover, a
// restart between two calls): the next calls succeed on fresh connections
// without the caller seeing an error.
func TestBackendsTerminated(t *testing.T) {
	u := newDatabase(t)
	db := openTest(t, u)
	admin := openTest(t, u)
	ctx := t.Context()
	s := mustSession(t, db, "alice")
	info, err := db.SaveCopy(ctx, s.ID, store.CopyMeta{}, strings.NewReader("kept"))
	if err != nil {
		t.Fatal(err)
	}
	// Warm several pooled connections.
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { db.StatCopy(ctx, s.ID, info.ID) })
	}
	wg.Wait()
	var killed int64
	err = admin.pool.QueryRow(ctx, `
SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&killed)
	if err != nil || killed == 0 {
		t.Fatalf("terminate backends: %d, %v", killed, err)
	}
	for i := range 8 {
		if _, err := db.StatCopy(ctx, s.ID, info.ID); err != nil {
			t.Fatalf("StatCopy %d after the server ended the connections: %v", i, err)
		}
		p := make([]byte, 4)
		if n, err := db.ReadCopyAt(ctx, s.ID, info.ID, p, 0); n != 4 || err != nil {
			t.Fatalf("ReadCopyAt %d after the server ended the connections: %d, %v", i, n, err)
		}
	}
}

// Fifty goroutines on a pool of two connections: calls wait for a
// connection, none fail.
func TestPoolExhausted(t *testing.T) {
	db := openTest(t, newDatabase(t, "pool_max_conns", "2"))
	if got := db.pool.Config().MaxConns; got != 2 {
		t.Fatalf("pool_max_conns=2 gave MaxConns %d", got)
	}
	ctx := t.Context()
	s := mustSession(t, db, "alice")
	const n = 50
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			data := bytes.Repeat([]byte{byte('a' + i%26)}, store.ChunkSize+4096+i*100)
			info, err := db.SaveCopy(ctx, s.ID, store.CopyMeta{Source: fmt.Sprint(i)}, bytes.NewReader(data))
			if err != nil {
				errs <- fmt.Errorf("goroutine %d: SaveCopy: %w", i, err)
				return
			}
			p := make([]byte, 4096)
			if n, err := db.ReadCopyAt(ctx, s.ID, info.ID, p, int64(store.ChunkSize-2048)); err != nil || !bytes.Equal(p[:n], data[store.ChunkSize-2048:store.ChunkSize+2048]) {
				errs <- fmt.Errorf("goroutine %d: ReadCopyAt: %d bytes, %v", i, n, err)
				return
			}
			if _, err := db.DefaultSession(ctx, "alice"); err != nil {
				errs <- fmt.Errorf("goroutine %d: DefaultSession: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if list, err := db.ListCopies(ctx, s.ID); err != nil || len(list) != n {
		t.Errorf("ListCopies = %d copies, %v; want %d", len(list), err, n)
	}
}

// The kill test's helper process: it saves a large copy through a slow
// reader and is killed midway by the test.
const (
	envHelper     = "SCROLLBACK_PG_KILL_HELPER"
	envHelperURL  = "SCROLLBACK_PG_KILL_URL"
	envHelperSess = "SCROLLBACK_PG_KILL_SESSION"
	envHelperID   = "SCROLLBACK_PG_KILL_ID"
	helperSaving  = "SAVING"
)

// killHelper runs in the re-executed test binary: it opens the database,
// starts saving, says helperSaving on stdout once three chunks have gone
// into the save, and goes on saving slowly until it is killed.
func killHelper() int {
	ctx := context.Background()
	db, err := Open(ctx, os.Getenv(envHelperURL))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	id := os.Getenv(envHelperID)
	db.newID = func(prefix string) string {
		if prefix == store.CopyPrefix {
			return id
		}
		return store.NewID(prefix)
	}
	_, err = db.SaveCopy(ctx, os.Getenv(envHelperSess), store.CopyMeta{Tool: "run_command"}, &slowReader{})
	fmt.Fprintln(os.Stderr, "helper: SaveCopy returned:", err)
	return 3
}

// slowReader yields lines of text without end: quickly for three chunks,
// then a line every few milliseconds.
type slowReader struct {
	n       int
	said    bool
	pending []byte
}

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.pending) == 0 {
		r.pending = fmt.Appendf(nil, "line %d of a long output\n", r.n/25)
	}
	if r.n >= 3*store.ChunkSize {
		if !r.said {
			r.said = true
			fmt.Println(helperSaving)
		}
		time.Sleep(5 * time.Millisecond)
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	r.n += n
	return n, nil
}

// A process killed mid-save leaves no copy that reads as complete: not
// listed, not found by id, no chunk of it visible, and the session is
// usable afterwards.
func TestKilledMidSave(t *testing.T) {
	u := newDatabase(t)
	db := openTest(t, u)
	ctx := t.Context()
	s := mustSession(t, db, "alice")
	id := store.NewID(store.CopyPrefix)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"=1", envHelperURL+"="+u, envHelperSess+"="+s.ID, envHelperID+"="+id)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	saying := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == helperSaving {
				saying <- true
				return
			}
		}
		saying <- false
	}()
	select {
	case ok := <-saying:
		if !ok {
			cmd.Wait()
			t.Fatalf("helper ended before saving: %s", stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("helper did not start saving in 30s: %s", stderr.String())
	}
	// The save is under way on the server: a COPY into chunks is running.
	var copying int64
	deadline := time.Now().Add(10 * time.Second)
	for copying == 0 && time.Now().Before(deadline) {
		copying = count(t, db, `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND query ILIKE 'copy%chunks%' AND state = 'active'`)
		if copying == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if copying == 0 {
		t.Fatal("no COPY into chunks running on the server while the helper saves")
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	if _, err := db.StatCopy(ctx, s.ID, id); !errors.Is(err, store.ErrCopyNotFound) {
		t.Errorf("StatCopy of the killed save: err = %v, want ErrCopyNotFound", err)
	}
	if n, err := db.ReadCopyAt(ctx, s.ID, id, make([]byte, 16), 0); n != 0 || !errors.Is(err, store.ErrCopyNotFound) {
		t.Errorf("ReadCopyAt of the killed save = %d, %v; want 0, ErrCopyNotFound", n, err)
	}
	if list, err := db.ListCopies(ctx, s.ID); err != nil || len(list) != 0 {
		t.Errorf("ListCopies after the killed save = %d copies, %v; want none", len(list), err)
	}
	// Once the server has noticed the dead client, its rows are gone for
	// good (rolled back), not merely invisible.
	deadline = time.Now().Add(10 * time.Second)
	for count(t, db, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'copy%chunks%'") > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the killed client's COPY is still running on the server after 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := count(t, db, "SELECT count(*) FROM copies WHERE id = $1", id); got != 0 {
		t.Errorf("%d copy rows for the killed save", got)
	}
	if _, err := db.SaveCopy(ctx, s.ID, store.CopyMeta{}, strings.NewReader("after the kill")); err != nil {
		t.Errorf("SaveCopy after the killed save: %v", err)
	}
}

// latencies records how long each benchmark operation took, for
// percentiles that b.N averages hide.
type latencies struct{ d []time.Duration }

func (l *latencies) start() func() {
	t0 := time.Now()
	return func() { l.d = append(l.d, time.Since(t0)) }
}

func (l *latencies) report(b *testing.B) {
	if len(l.d) == 0 {
		return
	}
	slices.Sort(l.d)
	q := func(f float64) float64 { return float64(l.d[int(f*float64(len(l.d)-1))].Nanoseconds()) / 1e3 }
	b.ReportMetric(q(0.5), "p50-µs")
	b.ReportMetric(q(0.9), "p90-µs")
	b.ReportMetric(q(0.99), "p99-µs")
}

// TestLockHeldElsewhere: a save that waits for a lock another connection
// holds (here the session's eviction lock, as a save stuck on a lost
// network would hold it) fails after lock_timeout with ErrBusy, a hint and
// nothing saved, instead of waiting for as long as the lock is held; it
// succeeds once the lock is let go. So does deleting a session whose row
// is held. The timeout is the default (set in each write transaction, as
// PgBouncer allows) or the URL's lock_timeout.
func TestLockHeldElsewhere(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params []string
	}{
		{"default", nil},
		{"from the URL", []string{"lock_timeout", "300ms"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.params == nil {
				old := defaultLockTimeout
				defaultLockTimeout = "300ms"
				t.Cleanup(func() { defaultLockTimeout = old })
			}
			ctx := t.Context()
			u := newDatabase(t, tc.params...)
			db := openTest(t, u)
			s := mustSession(t, db, "alice")

			holder, err := pgx.Connect(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close(ctx)
			if _, err := holder.Exec(ctx, "SELECT pg_advisory_lock($1::int, hashtext($2))", int32(sessionEvictLock), s.ID); err != nil {
				t.Fatal(err)
			}
			_, err = db.SaveCopy(ctx, s.ID, store.CopyMeta{Source: "blocked"}, strings.NewReader("some output"))
			if !errors.Is(err, store.ErrBusy) || !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("save under a held lock: %v; want store.ErrBusy", err)
			}
			if !strings.Contains(err.Error(), "lock_timeout") {
				t.Errorf("the error does not say what to look at: %v", err)
			}
			if list, err := db.ListCopies(ctx, s.ID); err != nil || len(list) != 0 {
				t.Errorf("after the failed save: %d copies, %v", len(list), err)
			}
			if _, err := holder.Exec(ctx, "SELECT pg_advisory_unlock_all()"); err != nil {
				t.Fatal(err)
			}
			if _, err := db.SaveCopy(ctx, s.ID, store.CopyMeta{Source: "free"}, strings.NewReader("some output")); err != nil {
				t.Fatalf("save once the lock is let go: %v", err)
			}

			// A session row held as an UPDATE holds it (another
			// instance's last use, stuck): the save goes in, and its
			// last use, written after the commit, gives up.
			tx, err := holder.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "SELECT 1 FROM sessions WHERE id = $1 FOR NO KEY UPDATE", s.ID); err != nil {
				t.Fatal(err)
			}
			if _, err := db.SaveCopy(ctx, s.ID, store.CopyMeta{Source: "row held"}, strings.NewReader("some output")); err != nil {
				t.Fatalf("save while the session's row is held: %v", err)
			}
			if _, err := tx.Exec(ctx, "SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE", s.ID); err != nil {
				t.Fatal(err)
			}
			if err := db.DeleteSession(ctx, "alice", s.ID); !errors.Is(err, store.ErrBusy) {
				t.Fatalf("delete of a held session: %v; want store.ErrBusy", err)
			}
			tx.Rollback(ctx)
			if err := db.DeleteSession(ctx, "alice", s.ID); err != nil {
				t.Fatalf("delete once the row is let go: %v", err)
			}
		})
	}
}
