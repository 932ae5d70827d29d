package capture

import (
	"bytes"
	"testing"
)

// BenchmarkWrite measures the capture's cost per byte for 256 KiB writes of
// text, under the cap (the head) and far past it (the ring).
func BenchmarkWrite(b *testing.B) {
	chunk := bytes.Repeat([]byte("2024-01-01 12:00:00 INFO request served in 3ms\n"), 256<<10/48)
	b.Run("head", func(b *testing.B) {
		b.SetBytes(int64(len(chunk)))
		c := New(Limits{})
		for b.Loop() {
			if len(c.buf)+len(chunk) > DefaultCopy {
				b.StopTimer()
				c = New(Limits{}) // fill a fresh head, growth included
				b.StartTimer()
			}
			c.Stdout().Write(chunk)
		}
	})
	b.Run("ring", func(b *testing.B) {
		b.SetBytes(int64(len(chunk)))
		c := New(Limits{})
		for range 40 {
			c.Stdout().Write(chunk)
		}
		for b.Loop() {
			c.Stdout().Write(chunk)
		}
	})
}

// BenchmarkResult measures building the copy (rotating the ring, placing the
// marker) after a cap was crossed.
func BenchmarkResult(b *testing.B) {
	chunk := bytes.Repeat([]byte("2024-01-01 12:00:00 INFO request served in 3ms\n"), 256<<10/48)
	for b.Loop() {
		b.StopTimer()
		c := New(Limits{})
		for range 50 {
			c.Stdout().Write(chunk)
		}
		b.StartTimer()
		c.Result()
	}
}
