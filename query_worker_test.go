package scrollback_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/store"
)

// queryEngines are two engines over one store, one running filters in
// this process and one in worker processes (the pool TestMain made),
// each with a session over the same copies.
func queryEngines(t *testing.T, opts scrollback.Options) (st store.Store, inProcess, workers *scrollback.Session) {
	t.Helper()
	db := openSQLite(t, filepath.Join(t.TempDir(), "scrollback.db"))
	ctx := context.Background()
	inProcess, err := scrollback.New(db, opts).NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	opts.CodeWorkers = testWorkers
	workers, err = scrollback.New(db, opts).Session(ctx, scrollback.LocalOwner, inProcess.ID())
	if err != nil {
		t.Fatal(err)
	}
	return db, inProcess, workers
}

// TestQueryWorkersSameAsInProcess: a filter run in a worker process gives
// the results, note and errors (message, hint, kind) that it gives run in
// this process, page after page.
func TestQueryWorkersSameAsInProcess(t *testing.T) {
	ctx := context.Background()
	st, local, worker := queryEngines(t, scrollback.Options{Capture: capture.Limits{Copy: 64 << 10}})
	save := func(data string, complete bool) string {
		info, err := st.SaveCopy(ctx, local.ID(), store.CopyMeta{Tool: "test", Complete: complete}, strings.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		return info.ID
	}
	doc := save(`{"items":[{"id":1,"tag":"é"},{"id":2,"tag":"😀"}],"summary":{"count":2}}`, true)
	lines := save("{\"level\":\"info\",\"n\":1}\n{\"level\":\"error\",\"n\":2}\n", true)
	text := save("{\"a\":1}\nnot json here\n", true)
	cut := save(`{"a":[1,2,3,`, false)
	cutLines := save("{\"n\":1}\n{\"n\":2}\n{\"n\":", false)
	var ids []string
	if runtime.GOOS != "windows" {
		// Copies cut at the cap: one document (ErrCut at the marker) and
		// JSON Lines (a gap, filtered on after it).
		for _, cmd := range []string{
			`printf '{"items": ['; seq -s ', ' 1 30000; printf ']}\n'`,
			`awk 'BEGIN { for (i = 0; i < 20000; i++) printf "{\"id\":%d}\n", i }'`,
		} {
			res, err := local.RunCommand(ctx, scrollback.RunCommandInput{Command: cmd})
			if err != nil || res.OutputID == "" || res.Gap == nil {
				t.Fatalf("%s: id %q, gap %v, %v; want a copy cut at the cap", cmd, res.OutputID, res.Gap, err)
			}
			ids = append(ids, res.OutputID)
		}
	}
	type call struct{ id, filter string }
	calls := []call{
		{doc, ".items[].tag"}, {doc, "[.items[].id] | add"}, {doc, "empty"}, {doc, "range(3000)"},
		{lines, `select(.level == "error") | .n`},
		{doc, ".items.x"}, {doc, `error("boom")`}, {doc, `error({a: 1})`}, {doc, "halt_error"},
		{doc, `"x" * 100000 | repeat(.)`}, {doc, "[inputs]"}, {doc, ".a["}, {doc, "keys_unsorted"},
		{text, "."}, {cut, "."}, {cutLines, ".n"},
	}
	for _, id := range ids {
		calls = append(calls, call{id, ".items | length"}, call{id, "select(.id % 1000 == 0) | .id"})
	}
	for _, c := range calls {
		t.Run(c.filter, func(t *testing.T) {
			for _, off := range []int64{0, 2, 4096} {
				in := scrollback.QueryInput{ID: c.id, Filter: c.filter, Offset: off, Limit: intp(100)}
				want, wantErr := local.QueryToolOutput(ctx, in)
				got, err := worker.QueryToolOutput(ctx, in)
				if fmt.Sprint(err) != fmt.Sprint(wantErr) || scrollback.ErrorKind(err) != scrollback.ErrorKind(wantErr) {
					t.Fatalf("offset %d: in a worker err = %v (%s), in this process %v (%s)", off, err, scrollback.ErrorKind(err), wantErr, scrollback.ErrorKind(wantErr))
				}
				if got != want {
					t.Errorf("offset %d: in a worker %+v, in this process %+v", off, got, want)
				}
			}
		})
	}
}

// bombDoc is a 1 MB JSON document: a filter that repeats it as one
// value is large in one step.
func bombDoc() []byte {
	var b bytes.Buffer
	b.WriteString(`{"a":[`)
	for i := 0; b.Len() < 1<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"item number %d"`, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// TestQueryWorkerMemoryBomb: a filter whose one step grows memory far
// past the bound (which the heap watch cannot stop between steps) ends
// its worker process, not this one, and is the memory-limit error; the
// next query works. The bound is 64 MiB, so that the bombs stay small.
func TestQueryWorkerMemoryBomb(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the operating system's memory limit and the server's watch of a worker's resident memory are tested on Linux; elsewhere a bomb could exhaust the machine")
	}
	ctx := context.Background()
	const bound = 64 << 20
	st, _, sess := queryEngines(t, scrollback.Options{QueryMaxMemory: bound})
	info, err := st.SaveCopy(ctx, sess.ID(), store.CopyMeta{Tool: "test", Complete: true}, bytes.NewReader(bombDoc()))
	if err != nil {
		t.Fatal(err)
	}
	bombs := []string{
		// tojson of one 1 MB value shared 30,000 times: 30 GB, in one step
		`. as $d | [range(30000)] | map($d) | tojson | length`,
		// a 2 GB string in one step
		`"x" * 2100000000 | length`,
		// a recursion whose stack doubles
		`def f: [f]; f`,
	}
	if !raceEnabled {
		// 400 million array slots (6.4 GB) in one step: the operating
		// system refuses the data segment (the race detector's build sets
		// no RLIMIT_DATA, and the slots, never touched, take no resident
		// memory).
		bombs = append(bombs, `.a[400000000] = 1 | .a | length`, `.a | setpath([400000000]; 1) | length`)
	}
	for _, filter := range bombs {
		t.Run(filter, func(t *testing.T) {
			_, err := sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: info.ID, Filter: filter})
			var se *scrollback.Error
			if !errors.As(err, &se) || scrollback.ErrorKind(err) != scrollback.KindArgument || se.Op != "query_tool_output" {
				t.Fatalf("err = %v (kind %s), want a query_tool_output error of kind argument", err, scrollback.ErrorKind(err))
			}
			if !strings.Contains(se.Msg, "the filter grew memory past the limit (64 MiB) and was stopped") {
				t.Errorf("%q does not name the memory limit", se.Msg)
			}
			t.Log(se.Msg)
			res, err := sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: info.ID, Filter: ".a | length"})
			if err != nil || res.Text == "" {
				t.Fatalf("the next query: %+v, %v", res, err)
			}
		})
	}
}

// TestQueryWorkerKilledAtTimeLimit: a filter whose one step runs far past
// the time limit (contains over two arrays of 100,000: 5e9 comparisons,
// which the time limit cannot stop between steps) has its worker process
// killed, and is the time-limit error, not a hang; the next query works.
func TestQueryWorkerKilledAtTimeLimit(t *testing.T) {
	ctx := context.Background()
	st, _, sess := queryEngines(t, scrollback.Options{QueryTimeout: 300 * time.Millisecond})
	info, err := st.SaveCopy(ctx, sess.ID(), store.CopyMeta{Tool: "test", Complete: true}, strings.NewReader(`{"n":100000}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: info.ID, Filter: `[range(.n)] as $a | $a | contains($a)`})
	var se *scrollback.Error
	if !errors.As(err, &se) || scrollback.ErrorKind(err) != scrollback.KindArgument {
		t.Fatalf("err = %v, want the time limit's error of kind argument", err)
	}
	if want := "the filter ran past the time limit (300ms) and was stopped (its worker process was killed)"; se.Msg != want {
		t.Errorf("message %q, want %q", se.Msg, want)
	}
	if res, err := sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: info.ID, Filter: ".n"}); err != nil || res.Text != "100000\n" {
		t.Fatalf("the next query: %+v, %v", res, err)
	}
}

// TestQueryWorkerCannotStart: an engine whose workers cannot start (a
// program that does not serve as one) says so, as unavailable, rather
// than run the filter in this process.
func TestQueryWorkerCannotStart(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the worker's command is true(1)")
	}
	ctx := context.Background()
	pool := codemode.NewPool(codemode.PoolOptions{Command: func() (*exec.Cmd, error) { return exec.Command("true"), nil }})
	defer pool.Close()
	st, _, _ := queryEngines(t, scrollback.Options{})
	sess, err := scrollback.New(st, scrollback.Options{CodeWorkers: pool}).NewSession(ctx, scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.SaveCopy(ctx, sess.ID(), store.CopyMeta{Tool: "test", Complete: true}, strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: info.ID, Filter: ".a"})
	if !errors.Is(err, scrollback.ErrUnavailable) || !errors.Is(err, codemode.ErrWorker) || !strings.Contains(err.Error(), "no worker process could be started") {
		t.Fatalf("err = %v, want ErrUnavailable saying no worker could start", err)
	}
}

// BenchmarkQueryLatency: one query (not cached: a new filter each time)
// over a small and a 1 MB copy, in this process and in a worker process.
// Back to back, each worker query waits for the pool to start and warm
// a replacement; sleep=1 leaves it time to, as between a model's calls.
func BenchmarkQueryLatency(b *testing.B) {
	ctx := context.Background()
	db := openSQLite(b, filepath.Join(b.TempDir(), "scrollback.db"))
	for _, size := range []struct {
		name string
		data []byte
	}{{"small", []byte(`{"a":["x","y","z"]}`)}, {"1MB", bombDoc()}} {
		for _, mode := range []struct {
			name    string
			workers *codemode.Pool
			pause   time.Duration
		}{{"in-process", nil, 0}, {"workers", testWorkers, 0}, {"workers-paced", testWorkers, 300 * time.Millisecond}} {
			b.Run(size.name+"/"+mode.name, func(b *testing.B) {
				sess, err := scrollback.New(db, scrollback.Options{CodeWorkers: mode.workers}).NewSession(ctx, scrollback.LocalOwner)
				if err != nil {
					b.Fatal(err)
				}
				info, err := db.SaveCopy(ctx, sess.ID(), store.CopyMeta{Tool: "test", Complete: true}, bytes.NewReader(size.data))
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if mode.pause > 0 {
						b.StopTimer()
						time.Sleep(mode.pause)
						b.StartTimer()
					}
					if _, err := sess.QueryToolOutput(ctx, scrollback.QueryInput{ID: info.ID, Filter: fmt.Sprintf(".a[%d:] | length", i)}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
