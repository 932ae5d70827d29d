// Package grepbench benchmarks grep_tool_output over an 8 MiB copy and a
// 5 MiB one-line JSON copy in a real SQLite store. The target: a literal
// over the whole 8 MiB copy in at most 50 ms. Run with
//
//	go test -run XXX -bench . ./bench/grep
//
// and compare with grep -c on the same bytes with go run ./bench/grep/cmd.
package grepbench

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/grep/greptest"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

func BenchmarkGrep8MiB(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(filepath.Join(b.TempDir(), "scrollback.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	sess, err := scrollback.New(st, scrollback.Options{}).NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	for i := 0; buf.Len() < scrollback.CopyCap-200; i++ {
		fmt.Fprintf(&buf, "2024-05-01T12:00:%02d.%06dZ INFO worker %d processed request id=%x status=200\n", i%60, i%1000000, i%17, i*7919)
	}
	buf.WriteString("2024-05-01T12:59:59Z ERROR MARKER-LAST the end\n")
	info, err := st.SaveCopy(ctx, sess.ID(), store.CopyMeta{Complete: true}, bytes.NewReader(buf.Bytes()))
	if err != nil {
		b.Fatal(err)
	}
	doc, err := st.SaveCopy(ctx, sess.ID(), store.CopyMeta{Complete: true}, bytes.NewReader(greptest.OneLineJSON(5<<20)))
	if err != nil {
		b.Fatal(err)
	}
	for _, in := range []scrollback.GrepInput{
		{Pattern: "MARKER-LAST"},
		{Pattern: "marker-last", IgnoreCase: true},
		{Pattern: `\d+Z ERROR`},
		{Pattern: "MARKER-LAST", Offset: 4 << 20},
		{Pattern: "MARKER-LAST", Count: true},
		{ID: doc.ID, Pattern: "NEEDLE-777"},
		{ID: doc.ID, Pattern: `NEEDLE-\d+"\}\]`},
	} {
		size := info.TotalBytes
		if in.ID == "" {
			in.ID = info.ID
		} else {
			size = doc.TotalBytes
		}
		b.Run(fmt.Sprintf("%s/i=%v/offset=%d/count=%v/size=%d", in.Pattern, in.IgnoreCase, in.Offset, in.Count, size), func(b *testing.B) {
			b.SetBytes(size - in.Offset)
			for b.Loop() {
				res, err := sess.GrepToolOutput(ctx, in)
				if err != nil || len(res.Matches)+int(res.Count) != 1 {
					b.Fatalf("%v, %d matches, count %d", err, len(res.Matches), res.Count)
				}
			}
		})
	}
}
