package codemode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback/jsonq"
)

func mustCompile(t *testing.T, src string) *jsonq.Filter {
	t.Helper()
	f, err := jsonq.Compile(src)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestPoolQuery: a filter run in a worker gives jsonq.Run's results and
// errors, whole: message, hint, offset and line.
func TestPoolQuery(t *testing.T) {
	p := testPool(t, 1)
	ctx := context.Background()
	for _, tc := range []struct{ doc, filter string }{
		{`{"a":[1,"é",{"b":null}]}`, ".a[]"},
		{"{\"n\":1}\n{\"n\":2}\n", ".n * 10"},
		{`{"a":1}`, ".a.b"},
		{"{\"a\":1}\nnot json\n", "."},
		{`[1,2,3]`, `"x" * 1000 | repeat(.)`},
	} {
		opts := jsonq.Options{MaxOutput: 1 << 20, Complete: true}
		want, wantErr := jsonq.Run(ctx, mustCompile(t, tc.filter), strings.NewReader(tc.doc), int64(len(tc.doc)), opts)
		got, err := p.Query(ctx, mustCompile(t, tc.filter), strings.NewReader(tc.doc), int64(len(tc.doc)), opts)
		var we, ge *jsonq.Error
		if errors.As(wantErr, &we) != errors.As(err, &ge) || (we != nil && (*we != *ge)) {
			t.Errorf("%s: err %#v, want %#v", tc.filter, ge, we)
			continue
		}
		if want != nil && (got == nil || !bytes.Equal(got.Text, want.Text) || got.Results != want.Results || got.Documents != want.Documents || got.Stopped != want.Stopped) {
			t.Errorf("%s: %+v, want %+v", tc.filter, got, want)
		}
	}
}

// failingReader holds n bytes of a copy and fails past them.
type failingReader struct{ n int64 }

var errDisk = errors.New("disk on fire")

func (r failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.n {
		return 0, errDisk
	}
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// TestPoolQueryReadError: a copy that cannot be read while it is sent is
// the reader's error, wrapped as jsonq.Run wraps it; the next query works.
func TestPoolQueryReadError(t *testing.T) {
	p := testPool(t, 1)
	ctx := context.Background()
	_, err := p.Query(ctx, mustCompile(t, "."), failingReader{1 << 20}, 4<<20, jsonq.Options{})
	if !errors.Is(err, errDisk) || !strings.HasPrefix(err.Error(), "jsonq: reading the copy: ") {
		t.Fatalf("err = %v, want the reader's error", err)
	}
	res, err := p.Query(ctx, mustCompile(t, ".a"), strings.NewReader(`{"a":1}`), 7, jsonq.Options{})
	if err != nil || string(res.Text) != "1\n" {
		t.Fatalf("the next query: %+v, %v", res, err)
	}
}

// TestPoolQueryBrokenWorkers: a worker that crashes, hangs, sends garbage,
// or a program that does not serve workers, is a clear error, never a hang.
func TestPoolQueryBrokenWorkers(t *testing.T) {
	tests := []struct {
		mode string
		err  error
		want string
	}{
		{"crash", jsonq.ErrRuntime, "exited with status 3: panic: something went wrong in the worker"},
		{"huge", jsonq.ErrRuntime, "frame over the size limit"},
		{"hang", jsonq.ErrTimeLimit, "the filter ran past the time limit (200ms) and was stopped (its worker process was killed)"},
		{"nohello", ErrWorker, "must call codemode.WorkerMain"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			_, err := fakePool(t, tt.mode).Query(context.Background(), mustCompile(t, "."), strings.NewReader("1"), 1, jsonq.Options{Timeout: 200 * time.Millisecond})
			if !errors.Is(err, tt.err) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %v with %q", err, tt.err, tt.want)
			}
		})
	}
}

// TestPoolQueryCanceled: the caller's cancel ends the worker and the
// query at once.
func TestPoolQueryCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := fakePool(t, "hang").Query(ctx, mustCompile(t, "."), strings.NewReader("1"), 1, jsonq.Options{Timeout: time.Hour})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// waitReady waits until p has n workers ready (or fails the test after a
// minute: a start that never ends, not a slow one).
func waitReady(t *testing.T, p *Pool, n int) {
	t.Helper()
	for start := time.Now(); len(p.ready) < n; time.Sleep(time.Millisecond) {
		if time.Since(start) > time.Minute {
			t.Fatalf("%d workers ready after a minute, want %d", len(p.ready), n)
		}
	}
}

// TestPoolQueriesLeaveScriptWorkers: a burst of filters does not take the
// warm workers scripts wait on (they used to share them: a script after a
// few queries waited for a worker's start). The filters are served by the
// pool's light query workers; the script worker stays ready, and the
// script then takes it without a wait or a start.
func TestPoolQueriesLeaveScriptWorkers(t *testing.T) {
	p := NewPool(PoolOptions{Size: 1, QuerySize: 1})
	t.Cleanup(func() { p.Close() })
	waitReady(t, p, 1)
	ctx := context.Background()
	const burst = 4
	errs := make(chan error, burst)
	f := mustCompile(t, ".a | length")
	for i := 0; i < burst; i++ {
		go func() {
			doc := `{"a":[1,2,3]}`
			res, err := p.Query(ctx, f, strings.NewReader(doc), int64(len(doc)), jsonq.Options{})
			if err == nil && string(res.Text) != "3\n" {
				err = fmt.Errorf("results %q, want 3", res.Text)
			}
			errs <- err
		}()
	}
	for i := 0; i < burst; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if took, waited, cold := p.took.Load(), p.waited.Load(), p.cold.Load(); took+waited+cold != 0 || len(p.ready) != 1 {
		t.Fatalf("the filters took %d ready script workers, waited for %d, started %d; %d left ready: want none taken and 1 ready", took, waited, cold, len(p.ready))
	}
	if p.queries == nil || !p.queries.opts.Light {
		t.Fatalf("the pool has no light query workers")
	}
	if n := p.queries.took.Load() + p.queries.waited.Load() + p.queries.cold.Load(); n != burst {
		t.Errorf("the query workers served %d filters, want %d", n, burst)
	}
	if res := p.Run(ctx, "return 1", nil, Options{}); res.Error != nil || string(res.Value) != "1" {
		t.Fatalf("result %+v, error %v", res, res.Error)
	}
	if took, waited, cold := p.took.Load(), p.waited.Load(), p.cold.Load(); took != 1 || waited+cold != 0 {
		t.Errorf("the script took %d ready workers, waited for %d, started %d: want the one ready", took, waited, cold)
	}
}
