package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Two `scrollback mcp --http` processes share one PostgreSQL database, as
// servers behind a load balancer would: a copy saved through one is paged
// through the other by a client that resumes its session there, and a
// client of another session cannot read it through either.
func TestTwoServersOnePostgres(t *testing.T) {
	base := os.Getenv("SCROLLBACK_TEST_POSTGRES")
	if base == "" {
		if os.Getenv("SCROLLBACK_SKIP_POSTGRES") == "1" {
			t.Skip("SCROLLBACK_SKIP_POSTGRES=1: PostgreSQL tests skipped")
		}
		t.Fatal("SCROLLBACK_TEST_POSTGRES is not set: run `eval \"$(.ci/postgres.sh)\"` first (or set SCROLLBACK_SKIP_POSTGRES=1 to skip)")
	}
	if os.Getenv("SCROLLBACK_SKIP_E2E") == "1" {
		t.Skip("SCROLLBACK_SKIP_E2E=1: end-to-end tests skipped")
	}
	bin := buildScrollback(t)
	db := freshDatabase(t, base)
	dir := t.TempDir()
	one := startHTTP(t, bin, dir, db)
	two := startHTTP(t, bin, dir, db)
	if one == two {
		t.Fatalf("both servers at %s", one)
	}

	// Server one runs the command and saves its copy.
	c1 := connectHTTP(t, one, nil)
	counter := filepath.Join(dir, "counter")
	res := callTool(t, c1, "run_command", map[string]any{"command": genCommand(counter)})
	var run struct {
		OutputID   string `json:"output_id"`
		TotalBytes int64  `json:"totalBytes"`
		Complete   bool   `json:"complete"`
	}
	decodeStructured(t, res, &run)
	session, _ := res.Meta["scrollback/session"].(string)
	if run.OutputID == "" || session == "" || !run.Complete {
		t.Fatalf("run_command: output_id %q session %q complete %v", run.OutputID, session, run.Complete)
	}

	// Server two pages through it for the same session.
	c2 := connectHTTP(t, two, map[string]string{"Scrollback-Session": session})
	var got strings.Builder
	for off := int64(0); ; {
		res := callTool(t, c2, "read_tool_output", map[string]any{"id": run.OutputID, "offset": off})
		if res.IsError {
			t.Fatalf("read_tool_output at %d through the second server: %s", off, textOf(res))
		}
		var page struct {
			Text       string `json:"text"`
			NextOffset int64  `json:"nextOffset"`
			HasMore    bool   `json:"hasMore"`
		}
		decodeStructured(t, res, &page)
		got.WriteString(page.Text)
		if !page.HasMore {
			break
		}
		off = page.NextOffset
	}
	if got.String() != string(expected()) {
		t.Fatalf("pages read through the second server (%d bytes) differ from the output (%d bytes)", got.Len(), len(expected()))
	}
	if ran, _ := os.ReadFile(counter); string(ran) != "ran\n" {
		t.Errorf("the command ran %d times", strings.Count(string(ran), "ran"))
	}

	// A client of another session reads nothing, through either server.
	for _, u := range []string{one, two} {
		other := connectHTTP(t, u, nil)
		res := callTool(t, other, "read_tool_output", map[string]any{"id": run.OutputID})
		if !res.IsError || !strings.Contains(textOf(res), "no retained output with that id in this session") {
			t.Errorf("another session read the copy through %s: isError %v %q", u, res.IsError, textOf(res))
		}
	}
}

// freshDatabase creates a database of its own for the test on the server
// base points at, and drops it afterwards.
func freshDatabase(t *testing.T, base string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connecting to %s: %v", base, err)
	}
	defer conn.Close(ctx)
	var b [6]byte
	rand.Read(b[:])
	name := "scrollback_e2e_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, base); err == nil {
			conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			conn.Close(ctx)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}

// headerTransport adds fixed headers to every request.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP connects a Go SDK client to a streamable HTTP endpoint, at
// protocol 2025-11-25: an MCP session of its own.
func connectHTTP(t *testing.T, endpoint string, headers map[string]string) *mcp.ClientSession {
	return connectHTTPAt(t, endpoint, headers, "2025-11-25")
}

// connectHTTPAt connects a Go SDK client asking for protocol version.
func connectHTTPAt(t *testing.T, endpoint string, headers map[string]string, version string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: headerTransport(headers)}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "v0"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// decodeStructured decodes a tool result's structuredContent into v.
func decodeStructured(t *testing.T, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
}

// TestVacuumBlockedSaid: servers connected as a user that does not own
// the tables (a team's usual set-up: one role migrates, the servers use
// another that was granted the tables) say at start, and `stats` says,
// that PostgreSQL's background VACUUM cannot run, with the statement
// that mends it; the servers serve all the same.
func TestVacuumBlockedSaid(t *testing.T) {
	base := os.Getenv("SCROLLBACK_TEST_POSTGRES")
	if base == "" {
		if os.Getenv("SCROLLBACK_SKIP_POSTGRES") == "1" {
			t.Skip("SCROLLBACK_SKIP_POSTGRES=1: PostgreSQL tests skipped")
		}
		t.Fatal("SCROLLBACK_TEST_POSTGRES is not set: run `eval \"$(.ci/postgres.sh)\"` first (or set SCROLLBACK_SKIP_POSTGRES=1 to skip)")
	}
	bin := binaryTest(t)
	db := freshDatabase(t, base)
	dir := t.TempDir()
	// The owner migrates the schema: stats as the owner says nothing.
	if out := mustRun(t, env(dir), bin, "stats", "--db", db); strings.Contains(out, "VACUUM") {
		t.Fatalf("stats as the owner: %s", out)
	}
	var b [4]byte
	rand.Read(b[:])
	role := "scrollback_e2e_app_" + hex.EncodeToString(b[:])
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + role,
		"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO " + role,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, db); err == nil {
			c.Exec(ctx, "DROP OWNED BY "+role)
			c.Close(ctx)
		}
		if c, err := pgx.Connect(ctx, base); err == nil {
			c.Exec(ctx, "DROP ROLE IF EXISTS "+role)
			c.Close(ctx)
		}
	})
	u, _ := url.Parse(db)
	u.User = url.User(role)
	app := u.String()

	out := mustRun(t, env(dir), bin, "stats", "--db", app)
	if !strings.Contains(out, "background VACUUM") || !strings.Contains(out, "cannot run") || !strings.Contains(out, "ALTER TABLE chunks OWNER TO") {
		t.Errorf("stats as the app's user says nothing of VACUUM:\n%s", out)
	}
	s := startServer(t, bin, dir, "--db", app)
	if log := s.log.String(); !strings.Contains(log, "no background VACUUM") || !strings.Contains(log, role) {
		t.Errorf("the server did not say at start that VACUUM cannot run:\n%s", log)
	}
	cs := connectHTTP(t, s.url, nil)
	if res := callTool(t, cs, "run_command", map[string]any{"command": "seq 1 50000"}); res.IsError {
		t.Errorf("the app's user cannot save: %s", textOf(res))
	}
}
