// Package pgtest makes throwaway PostgreSQL databases for tests, on the
// server that SCROLLBACK_TEST_POSTGRES names (a database the tests may
// connect to, as a user that may create databases; .ci/postgres.sh starts
// one and prints the export line). Each test gets a database of its own,
// dropped when it ends.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The environment: the server's URL, and the switch that skips the
// PostgreSQL tests on purpose. Without either, Server fails the test, so
// that CI can never pass by skipping them.
const (
	EnvURL  = "SCROLLBACK_TEST_POSTGRES"
	EnvSkip = "SCROLLBACK_SKIP_POSTGRES"
)

// Server returns the test server's URL from EnvURL. Without one it skips
// tb when EnvSkip is 1 and fails it otherwise, saying how to start one.
func Server(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		if os.Getenv(EnvSkip) == "1" {
			tb.Skipf("%s=1: skipping the PostgreSQL tests", EnvSkip)
		}
		tb.Fatalf("%s is not set: start a test server with\n\teval \"$(.ci/postgres.sh)\"\n"+
			"(from the repository root), or set %s=1 to skip the PostgreSQL tests on purpose", EnvURL, EnvSkip)
	}
	return u
}

// Create makes an empty database, with a fresh random name, on the server
// that admin names, and returns its URL (admin's, with the database's
// path) and a function that drops it.
func Create(ctx context.Context, admin string) (dbURL string, drop func() error, err error) {
	u, err := url.Parse(admin)
	if err != nil {
		return "", nil, fmt.Errorf("%s is not a URL: %w", EnvURL, err)
	}
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, fmt.Errorf("connect to %s=%s: %w (is the server running? eval \"$(.ci/postgres.sh)\")", EnvURL, admin, err)
	}
	defer conn.Close(ctx)
	var b [8]byte
	rand.Read(b[:])
	name := "scrollback_t_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, fmt.Errorf("create test database: %w", err)
	}
	drop = func() error {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			return fmt.Errorf("drop test database %s: %w", name, err)
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("drop test database %s: %w", name, err)
		}
		return nil
	}
	u.Path = "/" + name
	return u.String(), drop, nil
}

// Database creates an empty database on the test server (Server) and
// returns its URL, with params added to the query as name, value pairs
// (pool settings, say). The database is dropped when tb ends.
func Database(tb testing.TB, params ...string) string {
	tb.Helper()
	dbURL, drop, err := Create(context.Background(), Server(tb))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := drop(); err != nil {
			tb.Error(err)
		}
	})
	if len(params) == 0 {
		return dbURL
	}
	u, _ := url.Parse(dbURL) // Create made it from a URL that parsed
	q := u.Query()
	for i := 0; i+1 < len(params); i += 2 {
		q.Set(params[i], params[i+1])
	}
	u.RawQuery = q.Encode()
	return u.String()
}
