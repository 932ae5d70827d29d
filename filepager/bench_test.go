package filepager

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// benchFile returns a 90 MB file of 10 million numbered lines, made once per
// benchmark run.
func benchFile(b *testing.B) (path string, lines int64) {
	b.Helper()
	const n = 10_000_000
	path = filepath.Join(b.TempDir(), "bench.txt")
	if err := os.WriteFile(path, numbered(n), 0o644); err != nil {
		b.Fatal(err)
	}
	return path, n
}

// BenchmarkFarLineCold locates a line near the end of the file with no
// index: a scan of the whole file, which sets the bytes/s figure.
func BenchmarkFarLineCold(b *testing.B) {
	path, n := benchFile(b)
	b.SetBytes(9 * n)
	for b.Loop() {
		p := New(Options{})
		if _, err := p.Read(context.Background(), Request{Path: path, Line: n - 100}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNextPageWarm reads the page after a far line from a fresh Pager
// that loads the index from disk, as a new process would.
func BenchmarkNextPageWarm(b *testing.B) {
	path, n := benchFile(b)
	idx := b.TempDir()
	first, err := New(Options{IndexDir: idx}).Read(context.Background(), Request{Path: path, Line: n - 5000})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		p := New(Options{IndexDir: idx})
		if _, err := p.Read(context.Background(), Request{Path: path, Line: first.NextLine}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNextPageByOffset continues by byte offset with a warm Pager.
func BenchmarkNextPageByOffset(b *testing.B) {
	path, n := benchFile(b)
	p := New(Options{})
	first, err := p.Read(context.Background(), Request{Path: path, Line: n - 5000})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := p.Read(context.Background(), Request{Path: path, ByteOffset: &first.NextByteOffset}); err != nil {
			b.Fatal(err)
		}
	}
}
