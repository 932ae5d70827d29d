package cli

import (
	"context"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/postgres"
)

// The PostgreSQL backend is built in: a postgres:// or postgresql:// --db
// (or $SCROLLBACK_DB) opens it. A server that cannot be reached fails the
// command with an error naming the server and what to check.
func init() {
	openPostgres = func(ctx context.Context, url string) (store.Store, error) {
		db, err := postgres.Open(ctx, url)
		if err != nil {
			return nil, err // a typed nil *DB must not become a non-nil store.Store
		}
		return db, nil
	}
}
