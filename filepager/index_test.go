package filepager

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// newWithStep returns a Pager with checkpoints every step bytes.
func newWithStep(opts Options, step int64) *Pager {
	p := New(opts)
	p.step = step
	return p
}

// readLine reads line n and checks that it is the numbered line n.
func readLine(t *testing.T, p *Pager, path string, n int64) {
	t.Helper()
	pg, err := p.Read(context.Background(), Request{Path: path, Line: n, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%08d\n", n); pg.Text != want || pg.StartLine != n {
		t.Fatalf("line %d: got %q (startLine %d)", n, pg.Text, pg.StartLine)
	}
}

// scanned returns the bytes p has scanned since the last call.
func scanned(p *Pager) int64 { return p.scanned.Swap(0) }

func TestIndexInMemory(t *testing.T) {
	const n = 500_000 // 4.5 MB, 5 checkpoints
	path := writeFile(t, t.TempDir(), "f.txt", numbered(n))
	p := New(Options{})
	readLine(t, p, path, n-10)
	if s := scanned(p); s < 9*(n-11) {
		t.Fatalf("first read scanned %d bytes, expected the whole prefix", s)
	}
	readLine(t, p, path, n-9)
	if s := scanned(p); s > defaultStep {
		t.Errorf("second read scanned %d bytes, want at most one chunk (%d)", s, defaultStep)
	}
	// Earlier lines use earlier checkpoints.
	readLine(t, p, path, 200_000)
	if s := scanned(p); s > defaultStep {
		t.Errorf("read behind scanned %d bytes, want at most %d", s, defaultStep)
	}
}

func TestIndexPersists(t *testing.T) {
	const n = 500_000
	dir := t.TempDir()
	idx := filepath.Join(dir, "index")
	path := writeFile(t, dir, "f.txt", numbered(n))

	a := New(Options{IndexDir: idx})
	readLine(t, a, path, n-10)
	if s := scanned(a); s < 9*(n-11) {
		t.Fatalf("first read scanned %d bytes", s)
	}
	files, _ := filepath.Glob(filepath.Join(idx, "*.idx"))
	if len(files) != 1 {
		t.Fatalf("index files: %v", files)
	}

	// Another Pager, as in another process, starts from a checkpoint.
	b := New(Options{IndexDir: idx})
	readLine(t, b, path, n-9)
	if s := scanned(b); s > defaultStep {
		t.Errorf("second process scanned %d bytes, want at most %d", s, defaultStep)
	}

	// A corrupt index file is ignored, then rewritten.
	for _, junk := range [][]byte{nil, []byte("garbage"), func() []byte {
		data, _ := os.ReadFile(files[0])
		data[len(data)/2] ^= 0xff // a flipped bit somewhere in the checkpoints
		return data
	}()} {
		if err := os.WriteFile(files[0], junk, 0o600); err != nil {
			t.Fatal(err)
		}
		c := New(Options{IndexDir: idx})
		readLine(t, c, path, n-8)
		if s := scanned(c); s < 9*(n-9) {
			t.Errorf("corrupt index: scanned only %d bytes", s)
		}
		data, err := os.ReadFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := unmarshalIndex(data, defaultStep); err != nil {
			t.Errorf("index file not rewritten: %v", err)
		}
	}

	// A changed file (new size and mtime) is indexed afresh: stale
	// checkpoints would give wrong lines.
	changed := append([]byte("00000000\n"), numbered(n)...)
	if err := os.WriteFile(path, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	os.Chtimes(path, later, later)
	d := New(Options{IndexDir: idx})
	pg, err := d.Read(context.Background(), Request{Path: path, Line: n - 9, Limit: 1})
	if err != nil || pg.Text != fmt.Sprintf("%08d\n", n-10) {
		t.Errorf("changed file: %q, %v", pg.Text, err)
	}
	if s := scanned(d); s < 9*(n-10) {
		t.Errorf("changed file: scanned only %d bytes, the old index was used", s)
	}
}

// TestIndexSmallStep exercises many checkpoints, including chunks that hold
// no newline and lines that start exactly on a checkpoint.
func TestIndexSmallStep(t *testing.T) {
	data := []byte("a\n\n\nbcdefghijklmnopqrstuvwxyz\nxy\n€€€€€€\n\nlast")
	path := writeFile(t, t.TempDir(), "f.txt", data)
	lineStarts := []int64{0}
	for i, c := range data {
		if c == '\n' {
			lineStarts = append(lineStarts, int64(i+1))
		}
	}
	for _, order := range [][]int{{0, 1, 2, 3, 4, 5, 6, 7}, {7, 6, 5, 4, 3, 2, 1, 0}, {4, 0, 7, 2, 6}} {
		p := newWithStep(Options{IndexDir: t.TempDir()}, 7)
		for _, i := range order {
			pg, err := p.Read(context.Background(), Request{Path: path, Line: int64(i + 1), Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			end := int64(len(data))
			if i+1 < len(lineStarts) {
				end = lineStarts[i+1]
			}
			if pg.Text != string(data[lineStarts[i]:end]) {
				t.Errorf("order %v line %d: %q", order, i+1, pg.Text)
			}
		}
		// Every offset maps to its line.
		for o := int64(0); o <= int64(len(data)); o++ {
			pg, err := p.Read(context.Background(), Request{Path: path, ByteOffset: &o, Limit: 1})
			if err != nil {
				continue // inside a character
			}
			want := int64(1)
			for _, s := range lineStarts[1:] {
				if s <= o {
					want++
				}
			}
			if pg.StartLine != want {
				t.Errorf("offset %d: startLine %d, want %d", o, pg.StartLine, want)
			}
		}
	}
}

func TestUnmarshalIndexRejects(t *testing.T) {
	good := &lineIndex{step: defaultStep, path: "/f", size: 3 * defaultStep, stamp: 1, lines: []int64{1, 5, 9}, total: -1}
	if _, err := unmarshalIndex(good.marshal(), defaultStep); err != nil {
		t.Fatalf("good index rejected: %v", err)
	}
	for name, ix := range map[string]*lineIndex{
		"first not 1":       {step: defaultStep, path: "/f", size: 3 * defaultStep, lines: []int64{2, 5}, total: -1},
		"decreasing":        {step: defaultStep, path: "/f", size: 3 * defaultStep, lines: []int64{1, 5, 4}, total: -1},
		"too many newlines": {step: defaultStep, path: "/f", size: 3 * defaultStep, lines: []int64{1, defaultStep + 2}, total: -1},
		"too many entries":  {step: defaultStep, path: "/f", size: defaultStep, lines: []int64{1, 2, 3}, total: -1},
		"total too small":   {step: defaultStep, path: "/f", size: 3 * defaultStep, lines: []int64{1, 5, 9}, total: 3},
	} {
		if _, err := unmarshalIndex(ix.marshal(), defaultStep); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestConcurrent shares one Pager (and index file) among goroutines reading
// different lines of one file; run with -race.
func TestConcurrent(t *testing.T) {
	const n = 300_000
	path := writeFile(t, t.TempDir(), "f.txt", numbered(n))
	p := New(Options{IndexDir: t.TempDir()})
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := int64(0); i < 20; i++ {
				line := (int64(g)*7919 + i*15013) % n
				pg, err := p.Read(context.Background(), Request{Path: path, Line: line + 1, Limit: 1})
				if err != nil || pg.Text != fmt.Sprintf("%08d\n", line+1) {
					t.Errorf("line %d: %q, %v", line+1, pg.Text, err)
					return
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
}

// TestCancel stops a long scan when the context is cancelled.
func TestCancel(t *testing.T) {
	path := writeFile(t, t.TempDir(), "f.txt", numbered(300_000))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(Options{}).Read(ctx, Request{Path: path, Line: 299_999})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// TestIndexSameSizeAndMtime: a file rewritten in place with the same size
// and its modification time put back (touch -d, cp -p, rsync -t, tar x
// do that) is still another file: the line index of the old one must not
// locate lines in it, neither the index in memory nor the one on disk.
func TestIndexSameSizeAndMtime(t *testing.T) {
	const n = 300_000 // 2.7 MB: checkpoints to go astray
	for _, tt := range []struct {
		name  string
		again func(p *Pager, idx string) *Pager
	}{
		{"same pager", func(p *Pager, _ string) *Pager { return p }},
		{"another process", func(_ *Pager, idx string) *Pager { return New(Options{IndexDir: idx}) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, idx := t.TempDir(), t.TempDir()
			path := writeFile(t, dir, "f.txt", numbered(n))
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			p := New(Options{IndexDir: idx})
			readLine(t, p, path, n-10)

			// The same bytes shifted: one short line first, one line
			// fewer at the end, every other line one place later.
			shifted := append([]byte("0000000\n"), numbered(n)...)
			shifted = shifted[:fi.Size()-1]
			shifted = append(shifted, '\n')
			if err := os.WriteFile(path, shifted, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
			if now, err := os.Stat(path); err != nil || now.Size() != fi.Size() || !now.ModTime().Equal(fi.ModTime()) {
				t.Fatalf("the rewrite changed the size or mtime: %v %v", now, err)
			}
			pg, err := tt.again(p, idx).Read(context.Background(), Request{Path: path, Line: n - 10, Limit: 1})
			if want := fmt.Sprintf("%08d\n", n-11); err != nil || pg.Text != want {
				t.Errorf("line %d of the rewritten file: %q, %v; want %q", n-10, pg.Text, err, want)
			}
		})
	}
}
