package scrollback_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// countingStore is the SQLite store, counting the chunks appended to
// pending copies: proof that a command's head was saved while it ran.
type countingStore struct {
	*sqlite.DB
	appended atomic.Int64
}

func (c *countingStore) BeginCopy(ctx context.Context, session string) (store.PendingCopy, error) {
	p, err := c.DB.BeginCopy(ctx, session)
	return countingPending{p, c}, err
}

type countingPending struct {
	store.PendingCopy
	c *countingStore
}

func (p countingPending) Append(ctx context.Context, b []byte) error {
	p.c.appended.Add(int64(len(b) / store.ChunkSize))
	return p.PendingCopy.Append(ctx, b)
}

func newCountingSession(t *testing.T) (*scrollback.Session, *countingStore) {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "spill.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st := &countingStore{DB: db}
	sess, err := scrollback.New(st, scrollback.Options{}).NewSession(context.Background(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	return sess, st
}

// A command whose output arrives over time has its head saved while it
// runs; the finished copy is exactly the output, as without spilling.
func TestRunCommandSpillsWhileRunning(t *testing.T) {
	for _, c := range []struct {
		name, command string
		want          func() []byte
	}{
		// 1.3 MiB in bursts with pauses: several chunks settle mid-run.
		{"under the cap", "for i in $(seq 1 20); do seq $((i*10000)) $((i*10000+9999)); sleep 0.05; done", func() []byte {
			var b bytes.Buffer
			for i := 1; i <= 20; i++ {
				for j := i * 10000; j <= i*10000+9999; j++ {
					fmt.Fprintln(&b, j)
				}
			}
			return b.Bytes()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sess, st := newCountingSession(t)
			res, err := sess.RunCommand(t.Context(), scrollback.RunCommandInput{Command: c.command})
			if err != nil || res.OutputID == "" {
				t.Fatalf("RunCommand = %+v, %v", res, err)
			}
			if st.appended.Load() == 0 {
				t.Errorf("no chunk was saved while the command ran")
			}
			raw, _, _ := readAll(t, sess, res.OutputID)
			if want := c.want(); !bytes.Equal(raw, want) {
				t.Errorf("copy of %d bytes differs from the output (%d bytes) at %d", len(raw), len(want), firstDiff(raw, want))
			}
			copies, err := sess.Copies(t.Context())
			if err != nil || len(copies) != 1 {
				t.Errorf("Copies = %d, %v; want the one copy, no pending leftovers", len(copies), err)
			}
		})
	}
}

// A command past the copy cap (head, marker, tail) spills its head too,
// and the copy is the capture's, marker and tail included.
func TestRunCommandSpillsPastTheCap(t *testing.T) {
	sess, st := newCountingSession(t)
	res, err := sess.RunCommand(t.Context(), scrollback.RunCommandInput{Command: "seq 1 1500000; sleep 0.1; seq 1 1500000"})
	if err != nil || res.OutputID == "" || res.Complete {
		t.Fatalf("RunCommand = %+v, %v; want an incomplete copy", res, err)
	}
	raw, _, _ := readAll(t, sess, res.OutputID)
	if !bytes.HasPrefix(raw, []byte("1\n2\n3\n")) || !bytes.HasSuffix(raw, []byte("1499999\n1500000\n")) || res.Gap == nil {
		t.Fatalf("the copy lacks its head, tail or gap: %d bytes, gap %+v", len(raw), res.Gap)
	}
	// The head, spilled while the command ran, is the whole first lines.
	var head bytes.Buffer
	for i := 1; head.Len() < int(res.Gap.Offset); i++ {
		fmt.Fprintln(&head, i)
	}
	if !bytes.Equal(raw[:res.Gap.Offset], head.Bytes()[:res.Gap.Offset]) || !strings.HasSuffix(string(raw[:res.Gap.Offset]), "\n") {
		t.Errorf("the head before the marker is not the output's first lines")
	}
	if st.appended.Load() == 0 {
		t.Errorf("no chunk was saved while the command ran")
	}
}

// Output that fits the preview leaves nothing behind, spilled or not.
func TestRunCommandSpillFits(t *testing.T) {
	sess, _ := newCountingSession(t)
	res, err := sess.RunCommand(t.Context(), scrollback.RunCommandInput{Command: "echo hi; sleep 0.1"})
	if err != nil || res.OutputID != "" {
		t.Fatalf("RunCommand = %+v, %v", res, err)
	}
	if copies, _ := sess.Copies(t.Context()); len(copies) != 0 {
		t.Errorf("%d copies for output that fit the preview", len(copies))
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// plainStore hides store.Streamer: the copy is saved only after the
// command ends, as before spilling.
type plainStore struct{ store.Store }

// BenchmarkCapture100MiB runs `cat` of a 100 MiB text file through
// RunCommand, with the head saved while the command runs (spill) and only
// after it ends (nospill), beside the same cat into a pipe (pipe, the
// reference). The three alternate within each iteration, so that a busy
// machine slows them alike. Reports each median wall time and the ratios
// to the pipe; target: spill at most 1.5x pipe.
func BenchmarkCapture100MiB(b *testing.B) {
	f := filepath.Join(b.TempDir(), "out.txt")
	var block bytes.Buffer
	for i := 1; i <= 12000; i++ {
		fmt.Fprintf(&block, "%09d the quick brown fox jumps over the lazy dog, row %d of the block\n", i, i)
	}
	data := bytes.Repeat(block.Bytes(), 100<<20/block.Len()+1)[:100<<20]
	if err := os.WriteFile(f, data, 0o600); err != nil {
		b.Fatal(err)
	}
	newSess := func(st store.Store) *scrollback.Session {
		sess, err := scrollback.New(st, scrollback.Options{}).NewSession(context.Background(), scrollback.LocalOwner)
		if err != nil {
			b.Fatal(err)
		}
		return sess
	}
	db, err := sqlite.Open(filepath.Join(b.TempDir(), "bench.db"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	spill, nospill := newSess(db), newSess(plainStore{db})
	capture := func(sess *scrollback.Session) {
		res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{Command: "cat '" + f + "'"})
		if err != nil || res.OutputID == "" {
			b.Fatalf("RunCommand = %v, %v", res.Recovery, err)
		}
	}
	runs := []struct {
		name  string
		run   func()
		times []time.Duration
	}{
		{"pipe", func() {
			if err := exec.Command("/bin/sh", "-c", "cat '"+f+"' | cat >/dev/null").Run(); err != nil {
				b.Fatal(err)
			}
		}, nil},
		{"spill", func() { capture(spill) }, nil},
		{"nospill", func() { capture(nospill) }, nil},
	}
	i := 0
	for b.Loop() {
		for k := range runs {
			r := &runs[(i+k)%len(runs)]
			start := time.Now()
			r.run()
			r.times = append(r.times, time.Since(start))
		}
		i++
	}
	p50 := func(ts []time.Duration) float64 {
		slices.Sort(ts)
		return float64(ts[len(ts)/2].Microseconds()) / 1000
	}
	pipe := p50(runs[0].times)
	for _, r := range runs {
		m := p50(r.times)
		b.ReportMetric(m, r.name+"-p50-ms")
		if r.name != "pipe" {
			b.ReportMetric(m/pipe, r.name+"/pipe")
		}
	}
}
