package scrollback_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// BenchmarkReadToolOutput reads random 4 KiB pages of an 8 MiB copy through
// the whole reader (session lookup, offset validation, UTF-8 cut) and
// reports the median and p99 latency beside the mean. Target: median at
// most 100 µs.
func BenchmarkReadToolOutput(b *testing.B) {
	ctx := context.Background()
	sess := newSession(b, scrollback.Options{})
	line := []byte("2026-12-02T11:00:00Z INFO request served: 200 OK — größe ✓ 🚀\n")
	data := bytes.Repeat(line, scrollback.CopyCap/len(line))
	shown := sess.Retain(ctx, scrollback.RetainInput{Tool: "bench", Data: data, Complete: true})
	if shown.OutputID == "" {
		b.Fatal("no copy saved")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		off := rng.Int64N(int64(len(data) - 4096))
		// Align to a character start, as a caller following offsets would.
		for {
			if in, _, _ := utf8x.Inside(data[max(off-3, 0):], int(off-max(off-3, 0))); !in {
				break
			}
			off++
		}
		start := time.Now()
		if _, err := sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: shown.OutputID, Offset: off}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkRunCommandSmall is the engine's overhead on a command that
// prints one line: process start dominates.
func BenchmarkRunCommandSmall(b *testing.B) {
	sess := newSession(b, scrollback.Options{})
	for i := 0; i < b.N; i++ {
		if _, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{Command: "echo hi"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRetain8MiB retains an 8 MiB log of distinct lines in SQLite and
// makes its preview: the save, the footer's search for error-like lines
// (done while the copy is saved) and the cut. Its reference is the same
// benchmark on the engine before that search.
func BenchmarkRetain8MiB(b *testing.B) {
	sess := newSession(b, scrollback.Options{})
	var sb strings.Builder
	for i := 0; sb.Len() < 8<<20; i++ {
		fmt.Fprintf(&sb, "2024-01-01T00:%02d:%02dZ INFO request %d handled path=/api/v1/items/%d status=200 ms=%d\n", i/60%60, i%60, i, i*7919%100003, i%97)
	}
	data := []byte(sb.String()[:8<<20])
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if sh := sess.Retain(context.Background(), scrollback.RetainInput{Tool: "bench", Data: data, Complete: true}); sh.OutputID == "" {
			b.Fatal("no copy saved")
		}
	}
}
