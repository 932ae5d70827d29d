package filepager

import (
	"context"
	"os"
	"strings"
	"testing"
)

// A /proc file reports a size of 0 but has content: it is read to its end,
// not shown as an empty file.
func TestProcFile(t *testing.T) {
	p := New(Options{})
	pg, err := p.Read(context.Background(), Request{Path: "/proc/self/status"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(pg.Text, "Name:") || pg.TotalBytes != int64(len(pg.Text)) || pg.HasMore {
		t.Fatalf("got %d bytes of text, totalBytes %d, hasMore %v: %q", len(pg.Text), pg.TotalBytes, pg.HasMore, pg.Text[:min(len(pg.Text), 80)])
	}
	// A later line of it is found too.
	pg, err = p.Read(context.Background(), Request{Path: "/proc/self/status", Line: 2, Limit: 1})
	if err != nil || !strings.HasPrefix(pg.Text, "Umask:") && !strings.HasPrefix(pg.Text, "State:") {
		t.Fatalf("line 2: %q, %v", pg.Text, err)
	}
}

// A /sys file reports a size of 4096 whatever it holds: it is read to its
// end too, not refused as a file that changed while read.
func TestSysFile(t *testing.T) {
	const path = "/sys/class/net/lo/operstate"
	want, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("no %s here: %v", path, err)
	}
	pg, err := New(Options{}).Read(context.Background(), Request{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if pg.Text != string(want) || pg.TotalBytes != int64(len(want)) || pg.HasMore {
		t.Fatalf("got %q, totalBytes %d, hasMore %v; want %q whole", pg.Text, pg.TotalBytes, pg.HasMore, want)
	}
}
