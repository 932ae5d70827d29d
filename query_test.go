package scrollback_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// queryAll follows nextOffset from 0 and returns the concatenated pages,
// checking each page's rules on the way.
func queryAll(t testing.TB, sess *scrollback.Session, in scrollback.QueryInput) string {
	t.Helper()
	var all strings.Builder
	for calls := 0; ; calls++ {
		res, err := sess.QueryToolOutput(context.Background(), in)
		if err != nil {
			t.Fatalf("query from %d: %v", in.Offset, err)
		}
		limit := scrollback.PageLimit
		if in.Limit != nil {
			limit = *in.Limit
		}
		if len(res.Text) > limit || !utf8.ValidString(res.Text) || res.NextOffset != in.Offset+int64(len(res.Text)) {
			t.Fatalf("page at %d: %d bytes, next %d", in.Offset, len(res.Text), res.NextOffset)
		}
		all.WriteString(res.Text)
		if !res.HasMore {
			if res.NextOffset != res.TotalBytes {
				t.Fatalf("hasMore=false at %d of %d", res.NextOffset, res.TotalBytes)
			}
			return all.String()
		}
		if res.NextOffset <= in.Offset || calls > 1<<16 {
			t.Fatalf("nextOffset %d does not move on from %d", res.NextOffset, in.Offset)
		}
		in.Offset = res.NextOffset
	}
}

func TestQueryToolOutput(t *testing.T) {
	env := newTestEnv(t)
	doc := env.save(t, env.sess, []byte(`{"items":[{"id":1,"tag":"é"},{"id":2,"tag":"😀"}],"summary":{"count":2}}`))
	lines := env.save(t, env.sess, []byte("{\"level\":\"info\",\"n\":1}\n{\"level\":\"error\",\"n\":2}\n{\"level\":\"error\",\"n\":3}\n"))
	tests := []struct {
		id, filter, want string
	}{
		{doc, ".items | length", "2\n"},
		{doc, ".summary", `{"count":2}` + "\n"},
		{doc, ".items[].tag", "\"é\"\n\"😀\"\n"},
		{doc, "[.items[].id] | add", "3\n"},
		{doc, ".nothing", "null\n"},
		{doc, "empty", ""},
		{lines, `select(.level == "error") | .n`, "2\n3\n"},
		{lines, ".n", "1\n2\n3\n"},
	}
	for _, tt := range tests {
		t.Run(tt.filter, func(t *testing.T) {
			res, err := env.sess.QueryToolOutput(context.Background(), scrollback.QueryInput{ID: tt.id, Filter: tt.filter})
			if err != nil {
				t.Fatal(err)
			}
			want := scrollback.QueryResult{Text: tt.want, NextOffset: int64(len(tt.want)), TotalBytes: int64(len(tt.want)), Complete: true}
			if res != want {
				t.Errorf("got %+v, want %+v", res, want)
			}
		})
	}
}

// TestQueryPaging: small limits page the results by the reader's rules.
func TestQueryPaging(t *testing.T) {
	env := newTestEnv(t)
	id := env.save(t, env.sess, []byte(`["aé€😀", "b", "ccc😀"]`))
	want := "\"aé€😀\"\n\"b\"\n\"ccc😀\"\n"
	for _, limit := range []int{4, 5, 7, 100, 4096} {
		if got := queryAll(t, env.sess, scrollback.QueryInput{ID: id, Filter: ".[]", Limit: intp(limit)}); got != want {
			t.Errorf("limit %d: %q", limit, got)
		}
	}
	for _, tc := range []struct {
		offset int64
		limit  int
		err    error
		msg    string
	}{
		{3, 10, scrollback.ErrOffset, "offset 3 is inside a multi-byte UTF-8 character; the nearest valid offsets are 2 (before) and 4 (after)"},
		{-1, 10, scrollback.ErrOffset, "negative"},
		{int64(len(want)) + 1, 10, scrollback.ErrOffset, "past the end of the results"},
		{7, 2, scrollback.ErrLimit, "smaller than the 4-byte character"},
		{0, 0, scrollback.ErrLimit, "limit 0 is out of range"},
		{0, 4097, scrollback.ErrLimit, "limit 4097 is out of range"},
	} {
		_, err := env.sess.QueryToolOutput(context.Background(), scrollback.QueryInput{ID: id, Filter: ".[]", Offset: tc.offset, Limit: intp(tc.limit)})
		if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("offset %d limit %d: err = %v, want %v saying %q", tc.offset, tc.limit, err, tc.err, tc.msg)
		}
	}
	res, err := env.sess.QueryToolOutput(context.Background(), scrollback.QueryInput{ID: id, Filter: ".[]", Offset: int64(len(want))})
	if err != nil || res.Text != "" || res.HasMore || res.NextOffset != int64(len(want)) {
		t.Errorf("at the end: %+v, %v", res, err)
	}
}

// TestQueryErrors: every failure is an *Error of kind argument (or the
// reader's kinds) saying what was wrong.
func TestQueryErrors(t *testing.T) {
	env := newTestEnv(t)
	ctx := context.Background()
	doc := env.save(t, env.sess, []byte(`{"a":[1,2,3]}`))
	text := env.save(t, env.sess, []byte("{\"a\":1}\nnot json here\n"))
	cut, err := env.st.SaveCopy(ctx, env.sess.ID(), store.CopyMeta{Tool: "test", Complete: false}, strings.NewReader(`{"a":[1,2,3,`))
	if err != nil {
		t.Fatal(err)
	}
	cutLines, err := env.st.SaveCopy(ctx, env.sess.ID(), store.CopyMeta{Tool: "test", Complete: false}, strings.NewReader("{\"n\":1}\n{\"n\":2}\n{\"n\":"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, id, filter string
		err              error
		msg              []string
	}{
		{"bad filter", doc, ".a[", scrollback.ErrArgument, []string{`filter ".a["`, "not valid jq", "line 1"}},
		{"empty filter", doc, "", scrollback.ErrArgument, []string{"empty"}},
		{"inputs", doc, "[inputs]", scrollback.ErrArgument, []string{"inputs", "not available"}},
		{"env", doc, "env", scrollback.ErrArgument, []string{"env", "not available"}},
		{"runtime", doc, ".a.b", scrollback.ErrArgument, []string{"expected an object"}},
		{"time limit", doc, "last(range(1e18))", scrollback.ErrArgument, []string{"time limit (5s)"}},
		{"output limit", doc, `"x" * 100000 | repeat(.)`, scrollback.ErrArgument, []string{"output limit (8388608 bytes)"}},
		{"not JSON", text, ".", scrollback.ErrArgument, []string{"byte 8 (line 2)", `"not json here\n"`}},
		{"cut document", cut.ID, ".", scrollback.ErrArgument, []string{"cut at the cap"}},
		{"no such id", "out_aaaaaaaaaaaaaaaaaaaaaaaaaa", ".", scrollback.ErrNoOutput, nil},
		{"no id", "", ".", scrollback.ErrArgument, []string{"id is required"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "time limit" && testing.Short() {
				t.Skip("waits for the 5 s limit")
			}
			_, err := env.sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: tc.id, Filter: tc.filter})
			var se *scrollback.Error
			if !errors.Is(err, tc.err) || !errors.As(err, &se) || se.Op != "query_tool_output" {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			for _, m := range tc.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("%q lacks %q", err, m)
				}
			}
		})
	}
	// JSON Lines cut at the cap: queried as far as they parse, and said so.
	res, err := env.sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: cutLines.ID, Filter: ".n"})
	if err != nil || res.Text != "1\n2\n" || res.Complete || !strings.Contains(res.Note, "byte 16") {
		t.Errorf("cut JSON Lines: %+v, %v", res, err)
	}
}

// TestQueryScoping: the results of a filter never cross sessions, cached or
// not.
func TestQueryScoping(t *testing.T) {
	ctx := context.Background()
	env := newTestEnv(t)
	own := env.save(t, env.sess, []byte(`{"secret":"mine"}`))
	if got := queryAll(t, env.sess, scrollback.QueryInput{ID: own, Filter: ".secret"}); got != "\"mine\"\n" {
		t.Fatalf("own: %q", got)
	}
	other, err := env.eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.QueryToolOutput(ctx, scrollback.QueryInput{ID: own, Filter: ".secret"}); !errors.Is(err, scrollback.ErrNoOutput) {
		t.Errorf("another session, same id and filter: err = %v, want ErrNoOutput", err)
	}
	if err := env.st.DeleteSession(ctx, scrollback.LocalOwner, env.sess.ID()); err != nil {
		t.Fatal(err)
	}
	if _, err := env.sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: own, Filter: ".secret"}); !errors.Is(err, scrollback.ErrNoOutput) {
		t.Errorf("deleted session, results cached: err = %v, want ErrNoOutput", err)
	}
}

// TestQueryCache: paging runs the filter once. now differs on every run,
// so pages of one run fit together and a new filter text runs again.
func TestQueryCache(t *testing.T) {
	env := newTestEnv(t)
	id := env.save(t, env.sess, []byte(`null`))
	filter := "range(2000) | now"
	a := queryAll(t, env.sess, scrollback.QueryInput{ID: id, Filter: filter})
	b := queryAll(t, env.sess, scrollback.QueryInput{ID: id, Filter: filter})
	if a != b {
		t.Errorf("the second paging ran the filter again")
	}
	if first := strings.SplitN(a, "\n", 2)[0]; strings.Count(a, first) != 2000 && strings.Count(a, "\n") != 2000 {
		t.Errorf("results %q...", a[:40])
	}
}

// FuzzQueryPages: for any string in a JSON copy, paging the results with
// any limit gives valid UTF-8 pages that concatenate to the whole results.
func FuzzQueryPages(f *testing.F) {
	f.Add("aé€😀\xff", 5)
	f.Add(strings.Repeat("😀", 2000), 4096)
	f.Add("\u2028\"\\", 1)
	env := newTestEnv(f)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = 4 + (limit%4093+4093)%4093
		var b bytes.Buffer
		fmt.Fprintf(&b, "[%q, %q]", s, s) // Go quoting is valid JSON for these tests' purposes only when it parses
		id := env.save(t, env.sess, b.Bytes())
		res, err := env.sess.QueryToolOutput(context.Background(), scrollback.QueryInput{ID: id, Filter: ".[]"})
		if err != nil {
			return // Go's %q can write escapes JSON does not have (\x, \a): not JSON, an error
		}
		whole := queryAll(t, env.sess, scrollback.QueryInput{ID: id, Filter: ".[]", Limit: &limit})
		if int64(len(whole)) != res.TotalBytes || !strings.HasPrefix(whole, res.Text[:min(len(res.Text), 10)]) {
			t.Fatalf("pages give %d bytes of %d", len(whole), res.TotalBytes)
		}
	})
}

// TestQueryCutAtTheCap: a command printing one JSON document larger than
// the copy cap leaves a copy of its head, a marker and its tail;
// query_tool_output over it says the copy was cut at the cap (an
// incomplete copy), how much was dropped and where, not only that the copy
// is not valid JSON.
func TestQueryCutAtTheCap(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the command is a POSIX shell pipeline")
	}
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ctx := t.Context()
	eng := scrollback.New(st, scrollback.Options{Capture: capture.Limits{Copy: 64 << 10}})
	sess, err := eng.NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: `printf '{"items": ['; seq -s ', ' 1 100000; printf ']}\n'`})
	if err != nil || res.OutputID == "" || res.Complete || res.Gap == nil {
		t.Fatalf("RunCommand = %+v, %v; want an incomplete retained copy with a gap", res, err)
	}
	_, err = sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: res.OutputID, Filter: ".items | length"})
	if !errors.Is(err, scrollback.ErrArgument) {
		t.Fatalf("err = %v, want ErrArgument", err)
	}
	for _, want := range []string{"cut at the copy cap", "cap of 65536 bytes", fmt.Sprintf("%d bytes", res.Gap.Bytes), "incomplete",
		`read_tool_output {"id":"` + res.OutputID + `","offset":0}; grep_tool_output {"id":"` + res.OutputID + `","pattern":"<RE2>"}`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("%q calls the copy not valid JSON", err)
	}

	// From the CLI, what to do instead names its commands, not MCP tools.
	cli := scrollback.New(st, scrollback.Options{Surface: present.CLI("")})
	same, err := cli.Session(ctx, scrollback.LocalOwner, sess.ID())
	if err != nil {
		t.Fatal(err)
	}
	_, err = same.QueryToolOutput(ctx, scrollback.QueryInput{ID: res.OutputID, Filter: ".items | length"})
	var se *scrollback.Error
	if !errors.As(err, &se) {
		t.Fatalf("over the CLI: err = %v, want a *scrollback.Error", err)
	}
	said := se.Msg + "; " + se.Hint // what the CLI prints, without the op
	if want := "scrollback read --offset 0 " + res.OutputID + "; scrollback grep " + res.OutputID + " '<RE2>'"; !strings.Contains(said, want) || strings.Contains(said, "_tool_output") {
		t.Errorf("over the CLI: %q; want %q and no MCP tool", said, want)
	}
}

// TestQueryJSONLinesPastTheCap: a command printing JSON Lines past the
// copy cap keeps a head and a tail; a query reads both, so the newest
// records (the tail) are found, and the note says where the gap is and
// what may be missing. Before, the query stopped at the gap.
func TestQueryJSONLinesPastTheCap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a command printing 12 MB")
	}
	ctx := context.Background()
	// 245,000 documents take more than the default 5 s under the race
	// detector.
	sess := newSession(t, scrollback.Options{QueryTimeout: 2 * time.Minute})
	run, err := sess.RunCommand(ctx, scrollback.RunCommandInput{
		Command: `awk 'BEGIN { for (i = 0; i < 300000; i++) printf "{\"id\":%d,\"msg\":\"event number %d\"}\n", i, i }'`,
	})
	if err != nil || run.OutputID == "" || run.Complete || run.Gap == nil {
		t.Fatalf("run: %+v, %v; want a retained, incomplete copy with a gap", run.ShownCopy, err)
	}
	res, err := sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: run.OutputID, Filter: `select(.id == 0 or .id == 299990) | .msg`})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "\"event number 0\"\n\"event number 299990\"\n" || res.Complete {
		t.Errorf("results %q (complete %v), want the first record and one of the tail", res.Text, res.Complete)
	}
	for _, want := range []string{fmt.Sprintf("the copy cap dropped %d bytes", run.Gap.Bytes), "whole documents before that", "say it is uncertain, not absent"} {
		if !strings.Contains(res.Note, want) {
			t.Errorf("note %q lacks %q", res.Note, want)
		}
	}
	// A record in the gap (the head keeps 6 MiB, about the first 155,000)
	// is not found, and the note says it may exist.
	res, err = sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: run.OutputID, Filter: `select(.id == 200000)`})
	if err != nil || res.Text != "" || !strings.Contains(res.Note, "may still exist") {
		t.Errorf("a record in the gap: %q, note %q, %v", res.Text, res.Note, err)
	}
}

// FuzzQueryPaging: whatever the results hold (any text, multi-byte
// characters of every length) and whatever the limit, the pages follow
// one another by nextOffset, each valid UTF-8 and within the limit, and
// put together are the results in one page; an offset inside a character
// is the offset error, never a page that splits it.
func FuzzQueryPaging(f *testing.F) {
	f.Add("aé€😀", 4)
	f.Add(strings.Repeat("😀x", 700), 5)
	f.Add("\u2028<&>\x00\xff", 7)
	env := newTestEnv(f)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		limit = 4 + abs(limit)%(scrollback.PageLimit-3)
		doc, _ := json.Marshal(strings.Split(s, "é"))
		id := env.save(t, env.sess, doc)
		in := scrollback.QueryInput{ID: id, Filter: ".[]"}
		whole := queryAll(t, env.sess, in)
		in.Limit = intp(limit)
		if got := queryAll(t, env.sess, in); got != whole {
			t.Fatalf("pages of %d bytes put together:\n%q\nwant\n%q", limit, got, whole)
		}
		for off := range len(whole) {
			if utf8.RuneStart(whole[off]) {
				continue
			}
			_, err := env.sess.QueryToolOutput(context.Background(), scrollback.QueryInput{ID: id, Filter: ".[]", Offset: int64(off), Limit: intp(limit)})
			if !errors.Is(err, scrollback.ErrOffset) {
				t.Fatalf("offset %d inside a character: %v, want the offset error", off, err)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
