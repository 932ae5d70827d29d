package scrollback_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// A command whose output is larger than the preview budget: the preview
// shows its head and tail, the rest is read back from the retained copy by
// offset, without running the command again.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "scrollback-example")
	defer os.RemoveAll(dir)

	st, err := sqlite.Open(filepath.Join(dir, "scrollback.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	eng := scrollback.New(st, scrollback.Options{})
	sess, err := eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		log.Fatal(err)
	}

	res, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "seq 1 100000"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("truncated:", res.Truncated, "recovery:", res.Recovery, "copy bytes:", res.TotalBytes)
	fmt.Println("preview mentions the reader:", strings.Contains(res.Preview, "read_tool_output"))

	// Read the line "50000" straight from the copy: lines 1..49999 take
	// 9*2 + 90*3 + 900*4 + 9000*5 + 40000*6 = 288888 bytes.
	limit := 6
	page, err := sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: res.OutputID, Offset: 288888, Limit: &limit})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("page: %q next: %d more: %v complete: %v\n", page.Text, page.NextOffset, page.HasMore, page.Complete)
	// Output:
	// truncated: true recovery: available copy bytes: 588895
	// preview mentions the reader: true
	// page: "50000\n" next: 288894 more: true complete: true
}

// A tool result that is a large JSON document: the preview's footer
// outlines it and names query_tool_output, which answers with a jq filter
// instead of pages of JSON.
func ExampleSession_QueryToolOutput() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "scrollback-example")
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(filepath.Join(dir, "scrollback.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	sess, err := scrollback.New(st, scrollback.Options{}).NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		log.Fatal(err)
	}

	var doc strings.Builder
	doc.WriteString(`{"items":[`)
	for i := 1; i <= 2000; i++ {
		if i > 1 {
			doc.WriteString(",")
		}
		fmt.Fprintf(&doc, `{"id":%d,"status":%q}`, i, map[bool]string{true: "failed", false: "ok"}[i%500 == 0])
	}
	doc.WriteString(`],"summary":{"failed":4}}`)
	shown := sess.History(ctx, "export", "export --all", []byte(doc.String()))
	fmt.Println("outlined:", strings.Contains(shown.Preview, "  .summary: object of 1 key, at "))

	res, err := sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: shown.OutputID, Filter: `.items[] | select(.status == "failed") | .id`})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(res.Text)
	fmt.Println("totalBytes:", res.TotalBytes, "hasMore:", res.HasMore, "complete:", res.Complete)
	// Output:
	// outlined: true
	// 500
	// 1000
	// 1500
	// 2000
	// totalBytes: 19 hasMore: false complete: true
}
