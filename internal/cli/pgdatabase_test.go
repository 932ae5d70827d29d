package cli

import (
	"context"
	"os"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/scrollback-dev/scrollback/store/postgres/pgtest"
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
	admin := os.Getenv(pgtest.EnvURL)
	if admin == "" {
		ts.Fatalf("pgdatabase: %s is not set; guard the script with [!postgres] skip", pgtest.EnvURL)
	}
	dbURL, drop, err := pgtest.Create(context.Background(), admin)
	ts.Check(err)
	ts.Defer(func() {
		if err := drop(); err != nil {
			ts.Logf("%v", err)
		}
	})
	ts.Setenv(args[0], dbURL)
}
