package scrollback_test

import (
	"context"
	"errors"
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

// openExample opens a store in a fresh directory and a session in it; done
// closes the store and removes the directory.
func openExample(ctx context.Context) (sess *scrollback.Session, done func()) {
	dir, err := os.MkdirTemp("", "scrollback-example")
	if err != nil {
		log.Fatal(err)
	}
	st, err := sqlite.Open(filepath.Join(dir, "scrollback.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	sess, err = scrollback.New(st, scrollback.Options{}).NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		log.Fatal(err)
	}
	return sess, func() { st.Close(); os.RemoveAll(dir) }
}

// Following NextOffset from 0 until HasMore is false reads the whole
// retained copy, byte for byte; Complete says whether the copy holds all
// the command wrote.
func ExampleSession_ReadToolOutput() {
	ctx := context.Background()
	sess, done := openExample(ctx)
	defer done()

	res, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "seq 1 20000"})
	if err != nil {
		log.Fatal(err)
	}
	var copy strings.Builder
	pages := 0
	for off := int64(0); ; pages++ {
		page, err := sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: res.OutputID, Offset: off})
		if err != nil {
			log.Fatal(err)
		}
		copy.WriteString(page.Text)
		off = page.NextOffset
		if !page.HasMore {
			fmt.Println("complete:", page.Complete)
			break
		}
	}
	fmt.Println("pages:", pages+1, "bytes:", copy.Len(), "of", res.TotalBytes)
	// Output:
	// complete: true
	// pages: 27 bytes: 108894 of 108894
}

// Max bounds the matches of one call (HasMore then says more follow from
// NextOffset), and Count asks only how many lines match.
func ExampleSession_GrepToolOutput_count() {
	ctx := context.Background()
	sess, done := openExample(ctx)
	defer done()

	res, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "seq 1 100000"})
	if err != nil {
		log.Fatal(err)
	}
	found, err := sess.GrepToolOutput(ctx, scrollback.GrepInput{ID: res.OutputID, Pattern: "^9999[0-9]$", Max: 3})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range found.Matches {
		fmt.Println(m.Line, m.Offset, m.Text)
	}
	fmt.Println("hasMore:", found.HasMore)
	count, err := sess.GrepToolOutput(ctx, scrollback.GrepInput{ID: res.OutputID, Pattern: "^9999[0-9]$", Count: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("count:", count.Count)
	// Output:
	// 99990 588828 99990
	// 99991 588834 99991
	// 99992 588840 99992
	// hasMore: true
	// count: 10
}

// Every tool failure is an *Error: errors.Is tells its kind, Msg says what
// was wrong and Hint what would be right, for a program and a model alike.
func ExampleError() {
	ctx := context.Background()
	sess, done := openExample(ctx)
	defer done()

	res, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: `printf 'é%.0s' $(seq 1 20000)`})
	if err != nil {
		log.Fatal(err)
	}
	_, err = sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: res.OutputID, Offset: 1})
	var e *scrollback.Error
	if errors.As(err, &e) && errors.Is(err, scrollback.ErrOffset) {
		fmt.Println("kind:", scrollback.ErrorKind(err))
		fmt.Println("msg:", e.Msg)
		fmt.Println("hint:", e.Hint)
	}
	_, err = sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: "out_from_another_session"})
	fmt.Println(errors.Is(err, scrollback.ErrNoOutput), scrollback.ErrorKind(err))
	// Output:
	// kind: offset
	// msg: offset 1 is inside a multi-byte UTF-8 character
	// hint: the nearest valid offsets are 0 (before) and 2 (after)
	// true not_found
}

// An agent that calls tools of its own passes their results through
// History before they enter the conversation: a result within the history
// budget comes back whole, a larger one as a preview whose footer leads to
// its retained copy.
func ExampleSession_History() {
	ctx := context.Background()
	sess, done := openExample(ctx)
	defer done()

	small := sess.History(ctx, "weather", `weather("Oslo")`, []byte(`{"temp": -3}`))
	fmt.Println(small.Preview, small.Truncated, small.Recovery)

	big := sess.History(ctx, "search", `search("logs")`, []byte(strings.Repeat("a log line\n", 10000)))
	fmt.Println(big.Truncated, big.Recovery, len(big.Preview) <= scrollback.ShownBudget, strings.Contains(big.Preview, big.OutputID))
	// Output:
	// {"temp": -3} false not_needed
	// true available true true
}

// cancelOnWrite cancels a context at the first output a command writes.
type cancelOnWrite struct{ cancel context.CancelFunc }

func (w cancelOnWrite) Write(p []byte) (int, error) { w.cancel(); return len(p), nil }

// A call whose context ends while the command runs stops the command's
// process group and returns both: the result, with the output written up to
// then (and its copy, when one was needed), and an *Error that errors.Is
// finds as the context's error and as ErrUnavailable.
func ExampleSession_RunCommand_cancelled() {
	ctx := context.Background()
	sess, done := openExample(ctx)
	defer done()

	call, cancel := context.WithCancel(ctx)
	defer cancel()
	res, err := sess.RunCommand(call, scrollback.RunCommandInput{
		Command: "echo started; sleep 30; echo never",
		Output:  cancelOnWrite{cancel}, // the caller gives up once the command has started
	})
	fmt.Println("preview starts:", strings.HasPrefix(res.Preview, "started\n"), "never:", strings.Contains(res.Preview, "never"))
	fmt.Println("exit code:", res.ExitCode, "timed out:", res.TimedOut)
	fmt.Println(errors.Is(err, context.Canceled), errors.Is(err, scrollback.ErrUnavailable), scrollback.ErrorKind(err))
	// Output:
	// preview starts: true never: false
	// exit code: <nil> timed out: false
	// true true unavailable
}
