package sqlite_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// Save a tool's output as a retained copy and page through it.
func Example() {
	dir, err := os.MkdirTemp("", "scrollback-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := sqlite.Open(filepath.Join(dir, "state", "scrollback.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	ctx := context.Background()
	sess, err := db.DefaultSession(ctx, "local")
	if err != nil {
		log.Fatal(err)
	}
	output := strings.Repeat("a line of build output\n", 1000)
	info, err := db.SaveCopy(ctx, sess.ID, store.CopyMeta{Tool: "run_command", Source: "make", Complete: true}, strings.NewReader(output))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.TotalBytes, "bytes,", info.Lines, "lines")

	// Read the last 30 bytes: a short read at the end says io.EOF.
	p := make([]byte, 64)
	n, err := db.ReadCopyAt(ctx, sess.ID, info.ID, p, info.TotalBytes-30)
	fmt.Printf("%q %v\n", p[:n], err == io.EOF)

	// Another session cannot see the copy.
	other, _ := db.CreateSession(ctx, "local")
	_, err = db.StatCopy(ctx, other.ID, info.ID)
	fmt.Println(err)
	// Output:
	// 23000 bytes, 1000 lines
	// "output\na line of build output\n" true
	// store: no retained output with that id in this session
}
