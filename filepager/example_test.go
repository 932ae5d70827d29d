package filepager_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/scrollback-dev/scrollback/filepager"
)

// A long line is cut at a character boundary and continued with
// NextByteOffset; whole lines are preferred otherwise.
func Example() {
	dir, _ := os.MkdirTemp("", "filepager-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "notes.txt")
	os.WriteFile(path, []byte("first\n"+strings.Repeat("€", 6)+"\nlast\n"), 0o644)

	p := filepager.New(filepager.Options{PageBytes: 10})
	ctx := context.Background()
	pg, _ := p.Read(ctx, filepager.Request{Path: path, Line: 2})
	for {
		fmt.Printf("%q lines %d-%d next %d@%d more=%v\n", pg.Text, pg.StartLine, pg.EndLine, pg.NextLine, pg.NextByteOffset, pg.HasMore)
		if !pg.HasMore {
			break
		}
		next := pg.NextByteOffset
		pg, _ = p.Read(ctx, filepager.Request{Path: path, ByteOffset: &next})
	}

	_, err := p.Read(ctx, filepager.Request{Path: path, Line: 9})
	fmt.Println(strings.ReplaceAll(err.Error(), path, "notes.txt"))
	// Output:
	// "€€€" lines 2-2 next 2@15 more=true
	// "€€€\n" lines 2-2 next 3@25 more=true
	// "last\n" lines 3-3 next 4@30 more=false
	// filepager: read notes.txt: line past the end of the file: asked for line 9, the file has 3 lines; ask for a line from 1 to 3
}
