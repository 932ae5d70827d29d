package proxy

import (
	"bytes"
	"context"
	"io"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback"
)

// corrupting is a connection to an upstream whose replies have every
// "@BAD@" replaced by bytes that are not UTF-8, as a broken server would
// send them.
type corrupting struct{ io.ReadWriteCloser }

func (c corrupting) Read(p []byte) (int, error) {
	n, err := c.ReadWriteCloser.Read(p)
	copy(p[:n], bytes.ReplaceAll(p[:n], []byte("@BAD@"), []byte("\xff\xfe\xc3(\xed")))
	return n, err
}

func TestInvalidUTF8(t *testing.T) {
	dial := dialServer(testUpstream())
	_, _, cs := start(t, Upstream{Dial: func(ctx context.Context) (io.ReadWriteCloser, error) {
		rwc, err := dial(ctx)
		return corrupting{rwc}, err
	}}, Options{}, nil)
	for _, n := range []int{1, 5000} {
		in := strings.Repeat("a@BAD@b\n", n)
		res := call(t, cs, "echo", map[string]any{"text": in})
		if res.IsError {
			t.Fatalf("echo of invalid UTF-8: %s", text(res))
		}
		got := text(res)
		if !utf8.ValidString(got) || !strings.Contains(got, "\uFFFD") {
			t.Errorf("%d lines: the result is not valid UTF-8 with U+FFFD in place of the bad bytes: %.80q", n, got)
		}
		if n > 1 {
			id, _, _ := meta(t, res)
			copy, _ := readAll(t, cs, id)
			if !utf8.ValidString(copy) || !strings.HasPrefix(copy, "a\uFFFD") {
				t.Errorf("the copy does not begin with the replaced text: %.40q", copy)
			}
		}
	}
}

// TestHugeResult sends 100 MiB of text from a command upstream and checks
// that the proxy never holds it: the heap stays far below the result's
// size, and the copy holds the first 8 MiB, marked incomplete.
func TestHugeResult(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 100 MiB")
	}
	const size = 100 << 20
	_, sess, cs := start(t, commandUpstream(t), Options{CallTimeout: time.Minute}, nil)

	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	allocs := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(allocs)
	before := allocs[0].Value.Uint64()
	res := call(t, cs, "big", map[string]any{"n": size})
	close(stop)
	<-done
	metrics.Read(allocs)
	t.Logf("allocated during the call: %.1f MiB", float64(allocs[0].Value.Uint64()-before)/(1<<20))

	id, total, complete := meta(t, res)
	if total != scrollback.CopyCap || complete {
		t.Errorf("totalBytes %d complete %t, want %d false", total, complete, scrollback.CopyCap)
	}
	if len(text(res)) > 32768 {
		t.Errorf("preview of %d bytes", len(text(res)))
	}
	p := peak.Load()
	t.Logf("peak live heap during a %d MiB result: %.1f MiB", size>>20, float64(p)/(1<<20))
	if p > size*3/4 {
		t.Errorf("peak live heap %.1f MiB for a %d MiB result: the proxy held it whole", float64(p)/(1<<20), size>>20)
	}
	var got strings.Builder
	info, err := sess.Cat(context.Background(), id, &got)
	if err != nil || got.String() != bigText(size)[:scrollback.CopyCap] || info.Complete {
		t.Errorf("the copy is not the first %d bytes of the result (complete %t, %v)", scrollback.CopyCap, info.Complete, err)
	}
}
