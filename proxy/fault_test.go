package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
// that the proxy never holds it: the peak live heap does not grow with the
// result (a 50 MiB result first, then 100 MiB: what the proxy keeps is
// bounded by the copy cap, so the two peaks are alike, where holding the
// result would add 50 MiB), and the copy holds its head and its tail with
// one marker line at the gap, marked incomplete, the footer naming the
// original size.
func TestHugeResult(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 150 MiB")
	}
	const size = 100 << 20
	_, sess, cs := start(t, commandUpstream(t), Options{CallTimeout: time.Minute}, nil)

	// peakDuring calls big for n bytes and returns the result and the peak
	// live heap while it ran.
	peakDuring := func(n int) (*mcp.CallToolResult, uint64) {
		runtime.GC()
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
		res := call(t, cs, "big", map[string]any{"n": n})
		close(stop)
		<-done
		return res, peak.Load()
	}
	_, half := peakDuring(size / 2)
	res, p := peakDuring(size)
	t.Logf("peak live heap: %.1f MiB during a %d MiB result, %.1f MiB during %d MiB", float64(half)/(1<<20), size>>21, float64(p)/(1<<20), size>>20)
	if p > half+size/4 {
		t.Errorf("peak live heap grew from %.1f MiB to %.1f MiB when the result grew by %d MiB: the proxy holds it", float64(half)/(1<<20), float64(p)/(1<<20), size>>21)
	}
	if p > size {
		t.Errorf("peak live heap %.1f MiB for a %d MiB result: the proxy held it whole", float64(p)/(1<<20), size>>20)
	}

	if res.IsError {
		t.Fatalf("the call failed: %.500s", text(res))
	}
	id, total, complete := meta(t, res)
	if total > scrollback.CopyCap || total < scrollback.CopyCap/2 || complete {
		t.Errorf("totalBytes %d complete %t, want at most %d, false", total, complete, scrollback.CopyCap)
	}
	if len(text(res)) > 32768 {
		t.Errorf("preview of %d bytes", len(text(res)))
	}
	if !strings.Contains(text(res), fmt.Sprint(size)) {
		t.Errorf("the footer does not name the original size %d:\n%s", size, tail(text(res), 1200))
	}
	var got strings.Builder
	info, err := sess.Cat(context.Background(), id, &got)
	if err != nil || info.Complete {
		t.Fatalf("cat: complete %t, %v", info.Complete, err)
	}
	checkHeadTail(t, got.String(), bigText(size))
}

// markerRE matches the marker line the proxy puts where it dropped text.
var markerRE = regexp.MustCompile(`\n?\[scrollback: (\d+) bytes? \((\d+) lines?\) dropped here: the copy cap of [^\]\n]*\]\n`)

// checkHeadTail checks that copy is a head of orig, one marker line, and
// a tail of orig, the marker giving the bytes and lines between them.
func checkHeadTail(t *testing.T, copy, orig string) {
	t.Helper()
	loc := markerRE.FindStringSubmatchIndex(copy)
	if loc == nil {
		t.Fatalf("no marker line in the copy (%d bytes): %.200q ... %.200q", len(copy), copy[:min(200, len(copy))], tail(copy, 200))
	}
	if markerRE.MatchString(copy[loc[1]:]) {
		t.Errorf("more than one marker line")
	}
	head, tl := copy[:loc[0]], copy[loc[1]:]
	if copy[loc[0]] == '\n' && !strings.HasPrefix(orig, head+"\n") {
		// the newline before the marker was added: the head did not end a line
	} else if copy[loc[0]] == '\n' {
		head += "\n"
	}
	dropped, _ := strconv.Atoi(copy[loc[2]:loc[3]])
	lines, _ := strconv.Atoi(copy[loc[4]:loc[5]])
	if !strings.HasPrefix(orig, head) || !strings.HasSuffix(orig, tl) {
		t.Fatalf("the copy is not a head and a tail of the result: head %d bytes, tail %d bytes", len(head), len(tl))
	}
	if len(head)+dropped+len(tl) != len(orig) {
		t.Errorf("head %d + dropped %d + tail %d = %d bytes, want the original %d", len(head), dropped, len(tl), len(head)+dropped+len(tl), len(orig))
	}
	if want := strings.Count(orig[len(head):len(orig)-len(tl)], "\n"); lines != want {
		t.Errorf("the marker says %d lines dropped, want %d", lines, want)
	}
	if len(tl) < len(orig)/1000 && len(orig) > 1<<20 {
		t.Errorf("the tail is only %d bytes", len(tl))
	}
}

// TestDeadUpstreamStderr: when a command upstream dies, the error quotes
// the end of what it wrote to stderr, with its exit status.
func TestDeadUpstreamStderr(t *testing.T) {
	p, err := New(newEngine(t), Upstream{Command: []string{"sh", "-c", "echo starting >&2; echo 'fatal: no API key in $KEY' >&2; exit 3"}, Stderr: io.Discard}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	err = p.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "fatal: no API key in $KEY") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("the error does not quote the upstream's stderr and exit status: %v", err)
	}
	// Start fails once and for all (the command exits): no "next call".
	if err != nil && strings.Contains(err.Error(), "next call") {
		t.Errorf("the error of Start promises a next call: %v", err)
	}
}

func TestLastBytes(t *testing.T) {
	l := &lastBytes{max: 4}
	for _, s := range []string{"ab", "cdé", "fgh"} {
		l.Write([]byte(s))
	}
	if got := l.String(); got != "fgh" {
		t.Errorf("got %q, want the last 4 bytes from a character boundary, \"fgh\"", got)
	}
}
