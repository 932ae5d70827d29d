package chunkcodec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

func text(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "--- PASS: TestRead/case_%d (0.%02ds)\n", i, i%7)
	}
	return b.Bytes()[:n]
}

func noise(n int) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{1}).Read(b)
	return b
}

func TestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name  string
		data  []byte
		codec int
	}{
		{"empty", nil, Raw},
		{"text", text(64 << 10), Zstd},
		{"noise", noise(64 << 10), Raw},
		{"one byte", []byte("x"), Raw},
	} {
		stored, codec := Encode(nil, c.data)
		if codec != c.codec {
			t.Errorf("%s: codec %d, want %d", c.name, codec, c.codec)
		}
		if codec == Zstd && len(stored) > len(c.data)/4 {
			t.Errorf("%s: %d bytes compressed to %d", c.name, len(c.data), len(stored))
		}
		got, err := Decode(nil, stored, codec)
		if err != nil || !bytes.Equal(got, c.data) {
			t.Errorf("%s: Decode = %d bytes, %v; want the chunk back", c.name, len(got), err)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	stored, _ := Encode(nil, text(64<<10))
	for _, c := range []struct {
		name  string
		data  []byte
		codec int
	}{
		{"truncated frame", stored[:len(stored)/2], Zstd},
		{"not zstd", []byte("hello, world"), Zstd},
		{"unknown codec", stored, 7},
	} {
		if _, err := Decode(nil, c.data, c.codec); err == nil {
			t.Errorf("%s: Decode succeeded; want an error", c.name)
		}
	}
}

// FuzzRoundTrip: whatever the chunk, what Encode stores decodes to it.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("hello\nworld\n"))
	f.Add(text(5000))
	f.Add(noise(300))
	f.Fuzz(func(t *testing.T, data []byte) {
		stored, codec := Encode(nil, data)
		got, err := Decode(nil, stored, codec)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("round trip of %d bytes (codec %d): %d bytes, %v", len(data), codec, len(got), err)
		}
	})
}

// FuzzDecode: damaged stored bytes give an error or a chunk, never a
// panic or more than a chunk's worth.
func FuzzDecode(f *testing.F) {
	stored, _ := Encode(nil, text(10000))
	f.Add(stored)
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd})
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Decode(nil, data, Zstd)
		if err == nil && len(out) > maxChunk {
			t.Fatalf("decoded %d bytes", len(out))
		}
	})
}

func BenchmarkDecode64KiB(b *testing.B) {
	stored, codec := Encode(nil, text(64<<10))
	dst := make([]byte, 0, 64<<10)
	b.SetBytes(64 << 10)
	for b.Loop() {
		if _, err := Decode(dst, stored, codec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode64KiB(b *testing.B) {
	data := text(64 << 10)
	dst := make([]byte, 0, 64<<10)
	b.SetBytes(64 << 10)
	for b.Loop() {
		Encode(dst, data)
	}
}

func TestCache(t *testing.T) {
	var c Cache
	p := make([]byte, 4)
	if _, ok := c.ReadAt("out_a", 0, p, 0); ok {
		t.Fatal("empty cache hit")
	}
	c.Put("out_a", 0, []byte("hello world"))
	if n, ok := c.ReadAt("out_a", 0, p, 6); !ok || string(p[:n]) != "worl" {
		t.Errorf("ReadAt = %q, %v; want worl, true", p[:n], ok)
	}
	if _, ok := c.ReadAt("out_a", 1, p, 0); ok {
		t.Error("hit for another chunk of the copy")
	}
	if _, ok := c.ReadAt("out_b", 0, p, 0); ok {
		t.Error("hit for another copy's chunk")
	}
	if n, ok := c.ReadAt("out_a", 0, p, 20); !ok || n != 0 {
		t.Errorf("ReadAt past the chunk = %d, %v; want 0, true", n, ok)
	}
	for i := range cacheSize {
		c.Put("out_c", int64(i), []byte{byte(i)})
	}
	if _, ok := c.ReadAt("out_a", 0, p, 0); ok {
		t.Error("the oldest entry was not replaced")
	}
	if n, ok := c.ReadAt("out_c", 3, p, 0); !ok || n != 1 || p[0] != 3 {
		t.Errorf("ReadAt(out_c, 3) = %d, %v, %v", n, ok, p[:n])
	}
}
