package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"
)

// cmdPGDatabase creates an empty database on the PostgreSQL server that
// SCROLLBACK_TEST_POSTGRES names (scripts that use it check [postgres]
// first), sets VAR to its URL, and drops it when the script ends:
//
//	pgdatabase VAR
func cmdPGDatabase(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: pgdatabase VAR")
	}
	admin := os.Getenv("SCROLLBACK_TEST_POSTGRES")
	if admin == "" {
		ts.Fatalf("pgdatabase: SCROLLBACK_TEST_POSTGRES is not set; guard the script with [!postgres] skip")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	ts.Check(err)
	defer conn.Close(ctx)
	var b [8]byte
	rand.Read(b[:])
	name := "scrollback_t_" + hex.EncodeToString(b[:])
	_, err = conn.Exec(ctx, "CREATE DATABASE "+name)
	ts.Check(err)
	ts.Defer(func() {
		conn, err := pgx.Connect(ctx, admin)
		if err != nil {
			ts.Logf("drop test database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			ts.Logf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	ts.Check(err)
	u.Path = "/" + name
	ts.Setenv(args[0], u.String())
}
