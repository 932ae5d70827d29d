package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/postgres"
)

// Opening a database whose server is not running fails at once with an
// error that says so and names the server to check.
func ExampleOpen_unavailable() {
	_, err := postgres.Open(context.Background(), "postgres://scrollback@127.0.0.1:1/scrollback?sslmode=disable")
	fmt.Println(errors.Is(err, postgres.ErrUnavailable))
	fmt.Println(strings.Contains(err.Error(), "(127.0.0.1:1/scrollback)"))
	var e *postgres.Error
	if errors.As(err, &e) {
		fmt.Println(e.Op)
		fmt.Println(e.Hint)
	}
	// Output:
	// true
	// true
	// connect
	// check that PostgreSQL is running and reachable at 127.0.0.1:1/scrollback (pg_isready), then retry; the pool reconnects on its own
}

// Saving a copy through one server and paging through it from another
// that shares the database. (Not run: it needs a server.)
func ExampleOpen() {
	ctx := context.Background()
	url := os.Getenv("SCROLLBACK_DB") // postgres://scrollback@db.internal/scrollback
	a, err := postgres.Open(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer a.Close()
	b, err := postgres.Open(ctx, url) // another instance, elsewhere
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()

	sess, _ := a.CreateSession(ctx, "team-token")
	info, _ := a.SaveCopy(ctx, sess.ID, store.CopyMeta{Tool: "run_command", Complete: true},
		strings.NewReader("a long output\n"))
	page := make([]byte, 4096)
	n, _ := b.ReadCopyAt(ctx, sess.ID, info.ID, page, 0)
	fmt.Printf("%q\n", page[:n])
}
