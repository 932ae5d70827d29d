package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// ownPostgres is a PostgreSQL server of the test's own, which it may stop
// and start again.
type ownPostgres struct {
	bin, data, dir string
	port           int
	url            string
}

// asPostgres runs a PostgreSQL program as the postgres user when we are
// root (initdb and postgres refuse root).
func asPostgres(name string, args ...string) *exec.Cmd {
	if os.Getuid() == 0 {
		return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
	}
	return exec.Command(name, args...)
}

// startOwnPostgres makes and starts a throwaway cluster on a free port.
func startOwnPostgres(t *testing.T) *ownPostgres {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(bins) == 0 {
		if os.Getenv("SCROLLBACK_SKIP_POSTGRES") == "1" {
			t.Skip("SCROLLBACK_SKIP_POSTGRES=1: PostgreSQL tests skipped")
		}
		t.Fatal("no PostgreSQL server under /usr/lib/postgresql/*/bin: run .ci/postgres.sh once (it installs it), or set SCROLLBACK_SKIP_POSTGRES=1")
	}
	sort.Strings(bins)
	pg := &ownPostgres{bin: filepath.Dir(bins[len(bins)-1])}
	dir, err := os.MkdirTemp("/tmp", "scrollback-e2e-pg-")
	if err != nil {
		t.Fatal(err)
	}
	pg.dir, pg.data = dir, filepath.Join(dir, "data")
	t.Cleanup(func() {
		asPostgres(filepath.Join(pg.bin, "pg_ctl"), "-D", pg.data, "-m", "immediate", "-w", "stop").Run()
		os.RemoveAll(dir)
	})
	if os.Getuid() == 0 {
		if out, err := exec.Command("chown", "postgres:", dir).CombinedOutput(); err != nil {
			t.Fatalf("chown: %v %s", err, out)
		}
	}
	if out, err := asPostgres(filepath.Join(pg.bin, "initdb"), "-D", pg.data, "-U", "postgres", "--auth=trust", "--encoding=UTF8", "--locale=C").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	// A free port of its own: $SCROLLBACK_PG_PORT belongs to the suite's
	// shared server (.ci/postgres.sh), which this test must not meet.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pg.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	pg.url = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", pg.port)
	pg.start(t)
	return pg
}

func (pg *ownPostgres) start(t *testing.T) {
	t.Helper()
	opts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off", pg.port, pg.dir)
	if out, err := asPostgres(filepath.Join(pg.bin, "pg_ctl"), "-D", pg.data, "-l", filepath.Join(pg.dir, "log"), "-o", opts, "-w", "-t", "60", "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(pg.dir, "log"))
		t.Fatalf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
}

func (pg *ownPostgres) stop(t *testing.T) {
	t.Helper()
	if out, err := asPostgres(filepath.Join(pg.bin, "pg_ctl"), "-D", pg.data, "-m", "fast", "-w", "stop").CombinedOutput(); err != nil {
		t.Fatalf("pg_ctl stop: %v\n%s", err, out)
	}
}

// TestOperatorReadyzPostgres: /readyz turns 503, with the reason, when
// PostgreSQL stops, while /healthz stays 200; it is 200 again when
// PostgreSQL is back, and calls are served.
func TestOperatorReadyzPostgres(t *testing.T) {
	bin := binaryTest(t)
	pg := startOwnPostgres(t)
	dir := t.TempDir()
	s := startServer(t, bin, dir, "--db", pg.url)
	if code, body := getStatus(t, s.base+"/readyz", nil); code != 200 {
		t.Fatalf("readyz with PostgreSQL up: %d %q", code, body)
	}
	cs := connectHTTP(t, s.url, nil)
	if res, err := tryCall(cs, "echo before"); err != nil || res.IsError {
		t.Fatalf("a call: %v", err)
	}

	pg.stop(t)
	var body string
	waitUntil(t, "readyz 503", func() bool {
		var code int
		code, body = getStatus(t, s.base+"/readyz", nil)
		return code == 503
	})
	if !strings.Contains(body, "not ready: store") {
		t.Errorf("readyz body %q does not say why", body)
	}
	if code, _ := getStatus(t, s.base+"/healthz", nil); code != 200 {
		t.Errorf("healthz with PostgreSQL down: %d", code)
	}

	pg.start(t)
	waitUntil(t, "readyz 200", func() bool { code, _ := getStatus(t, s.base+"/readyz", nil); return code == 200 })
	if res, err := tryCall(cs, "seq 100000"); err != nil || res.IsError {
		t.Errorf("a call once PostgreSQL is back: %v %v", err, res)
	}
}
