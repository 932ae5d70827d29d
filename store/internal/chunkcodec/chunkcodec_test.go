package chunkcodec

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"sync"
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
		{"text", text(64 << 10), ZstdFrames},
		{"text, three frames, the last short", text(40000), ZstdFrames},
		{"text, one frame", text(5000), ZstdFrames},
		{"noise", noise(64 << 10), Raw},
		{"one byte", []byte("x"), Raw},
	} {
		stored, codec := Encode(nil, c.data)
		if codec != c.codec {
			t.Errorf("%s: codec %d, want %d", c.name, codec, c.codec)
		}
		if codec == ZstdFrames && len(stored) > len(c.data)/4 {
			t.Errorf("%s: %d bytes compressed to %d", c.name, len(c.data), len(stored))
		}
		got, err := Decode(nil, stored, codec)
		if err != nil || !bytes.Equal(got, c.data) {
			t.Errorf("%s: Decode = %d bytes, %v; want the chunk back", c.name, len(got), err)
		}
	}
}

// seq is `seq 1 n`.
func seq(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.Bytes()
}

// TestCompressesWithoutMatches: text in which the fastest match finder
// finds no repeat, such as `seq 1 100000` (its numbers differ within the
// match length it looks for), is still compressed, by entropy coding of its
// literals: each of its chunks, and each of its frames alone, to at most
// 0.45x (gzip -6 makes 0.37x of the whole, zstd -1 0.42x). Without that
// every chunk stayed raw.
func TestCompressesWithoutMatches(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
		max  float64
	}{
		{"seq 1 100000", seq(100000), 0.45},
		{"seq 1 20000", seq(20000), 0.45},
		{"one frame of seq", seq(100000)[300000 : 300000+FrameSize], 0.45},
		{"a short chunk of seq", seq(100000)[500000:502000], 0.5},
		{"random hex digits", []byte(fmt.Sprintf("%x", noise(32<<10))), 0.6},
	} {
		stored := 0
		for off := 0; off < len(c.data); off += 64 << 10 {
			chunk := c.data[off:min(len(c.data), off+64<<10)]
			out, codec := Encode(nil, chunk)
			if codec != ZstdFrames {
				t.Errorf("%s: chunk at %d stored with codec %d, want %d (compressed)", c.name, off, codec, ZstdFrames)
			}
			if got, err := Decode(nil, out, codec); err != nil || !bytes.Equal(got, chunk) {
				t.Fatalf("%s: chunk at %d does not decode back: %v", c.name, off, err)
			}
			stored += len(out)
		}
		if r := float64(stored) / float64(len(c.data)); r > c.max {
			t.Errorf("%s: %d bytes stored in %d: %.3fx, want at most %.2fx", c.name, len(c.data), stored, r, c.max)
		} else {
			t.Logf("%s: %.3fx", c.name, r)
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
		{"truncated frames", stored[:len(stored)/2], ZstdFrames},
		{"not zstd", []byte("hello, world"), Zstd},
		{"frames: no index", nil, ZstdFrames},
		{"frames: zero frames", []byte{0}, ZstdFrames},
		{"frames: more frames than a chunk holds", append([]byte{0x80, 0x01}, stored...), ZstdFrames},
		{"frames: index counts more bytes than there are", append([]byte{1, 0xff, 0x7f}, stored[:100]...), ZstdFrames},
		{"frames: not zstd behind a good index", []byte{1, 5, 'h', 'e', 'l', 'l', 'o'}, ZstdFrames},
		{"frames as one frame", stored, Zstd},
		{"unknown codec", stored, 7},
	} {
		if _, err := Decode(nil, c.data, c.codec); err == nil {
			t.Errorf("%s: Decode succeeded; want an error", c.name)
		}
	}
}

// TestDecodeZstd: chunks stored before ZstdFrames, one zstd frame each,
// still decode, whole and through the cache.
func TestDecodeZstd(t *testing.T) {
	chunk := text(64 << 10)
	stored := newEncoder(false).EncodeAll(chunk, nil)
	if got, err := Decode(nil, stored, Zstd); err != nil || !bytes.Equal(got, chunk) {
		t.Fatalf("Decode = %d bytes, %v; want the chunk", len(got), err)
	}
	var c Cache
	p := make([]byte, 4096)
	if n, err := c.Read(p, "out_old", 0, Zstd, stored, 30000); err != nil || !bytes.Equal(p[:n], chunk[30000:34096]) {
		t.Errorf("Cache.Read = %d, %v; want bytes 30000-34096", n, err)
	}
}

// TestEncoderPool: one caller after another borrows the same encoders
// (a lone writer touches one encoder's memory, not GOMAXPROCS states'),
// and callers at once each get their own: what they encode decodes to
// what they gave (go test -race checks that no two share one).
func TestEncoderPool(t *testing.T) {
	encoders.mu.Lock()
	encoders.free = nil
	encoders.mu.Unlock()
	chunk := text(64 << 10)
	for range 5 {
		if _, codec := Encode(nil, chunk); codec != ZstdFrames {
			t.Fatalf("codec %d", codec)
		}
	}
	if n := len(encoders.free); n != 1 {
		t.Errorf("after five Encode calls one after another, %d encoders were made; want 1", n)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			src := text(40000 + g*1000)
			for range 20 {
				stored, codec := Encode(nil, src)
				if got, err := Decode(nil, stored, codec); err != nil || !bytes.Equal(got, src) {
					t.Errorf("goroutine %d: Decode = %d bytes, %v; want its own chunk", g, len(got), err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestDecodeRange: a range decodes only the frames it lies in (one, or
// two when it straddles them), and what it returns is the chunk's bytes
// from where it says.
func TestDecodeRange(t *testing.T) {
	for _, size := range []int{64 << 10, 40000, 5000} {
		chunk := text(size)
		stored, codec := Encode(nil, chunk)
		if codec != ZstdFrames {
			t.Fatalf("codec %d", codec)
		}
		for _, c := range []struct {
			from, n    int64
			wantFrames int
		}{
			{0, 4096, 1},
			{FrameSize - 100, 4096, 2},
			{FrameSize, 4096, 1},
			{2*FrameSize + 5, 4096, 1},
			{int64(size) - 10, 4096, 1},
			{int64(size) + 100, 4096, 1}, // past the end: the last frame
			{1 << 40, 4096, 1},
			{100, 0, 1},
			{0, 1 << 20, -1}, // all of it
		} {
			out, start, err := DecodeRange(nil, stored, codec, c.from, c.n)
			if err != nil {
				t.Fatalf("%d bytes, [%d,+%d): %v", size, c.from, c.n, err)
			}
			if start%FrameSize != 0 || start+int64(len(out)) > int64(size) || !bytes.Equal(out, chunk[start:start+int64(len(out))]) {
				t.Fatalf("%d bytes, [%d,+%d): %d bytes from %d are not the chunk's", size, c.from, c.n, len(out), start)
			}
			end := min(c.from+c.n, int64(size))
			if c.from < int64(size) && (start > c.from || start+int64(len(out)) < end) {
				t.Errorf("%d bytes, [%d,+%d): got [%d,%d), not all of the range", size, c.from, c.n, start, start+int64(len(out)))
			}
			frames := (len(out) + FrameSize - 1) / FrameSize
			want := c.wantFrames
			if want < 0 {
				want = (size + FrameSize - 1) / FrameSize
			}
			if frames > want {
				t.Errorf("%d bytes, [%d,+%d): decoded %d frames, want %d", size, c.from, c.n, frames, want)
			}
		}
	}
}

// TestCachePartial: a read from within a ZstdFrames chunk decodes its
// frames without keeping them; one from its start decodes and keeps the
// chunk, and the reads after it are hits.
func TestCachePartial(t *testing.T) {
	chunk := text(64 << 10)
	stored, codec := Encode(nil, chunk)
	var c Cache
	p := make([]byte, 4096)
	if n, err := c.Read(p, "out_a", 0, codec, stored, 20000); err != nil || !bytes.Equal(p[:n], chunk[20000:24096]) {
		t.Fatalf("Read(20000) = %d, %v", n, err)
	}
	if c.Len() != 0 {
		t.Errorf("a read from within the chunk kept %d entries, want 0", c.Len())
	}
	if n, err := c.Read(p, "out_a", 0, codec, stored, int64(len(chunk))+1); err != nil || n != 0 {
		t.Errorf("Read past the end = %d, %v; want 0, nil", n, err)
	}
	if n, err := c.Read(p, "out_a", 0, codec, stored, 0); err != nil || !bytes.Equal(p[:n], chunk[:4096]) {
		t.Fatalf("Read(0) = %d, %v", n, err)
	}
	if n, err := c.Read(p, "out_a", 0, codec, garbage, 4096); err != nil || !bytes.Equal(p[:n], chunk[4096:8192]) {
		t.Errorf("Read(4096) after Read(0) = %d, %v; want a hit", n, err)
	}
	if _, err := c.Read(p, "out_b", 0, codec, stored[:len(stored)-3], 30000); err == nil {
		t.Errorf("a damaged chunk read from within: no error")
	}
}

// FuzzRoundTrip: whatever the chunk, what Encode stores decodes to it,
// and a compressed chunk is written into a dst of DstSize, never past it.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("hello\nworld\n"))
	f.Add(text(5000))
	f.Add(noise(300))
	f.Add(append(text(40000), noise(24000)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			data = data[:64<<10]
		}
		dst := make([]byte, 0, DstSize(len(data)))
		stored, codec := Encode(dst, data)
		got, err := Decode(nil, stored, codec)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("round trip of %d bytes (codec %d): %d bytes, %v", len(data), codec, len(got), err)
		}
		if codec != Raw && &stored[:cap(stored)][cap(stored)-1] != &dst[:cap(dst)][cap(dst)-1] {
			t.Fatalf("%d bytes compressed outside the dst of DstSize (%d)", len(data), cap(dst))
		}
	})
}

// TestEncodeDoesNotAllocate: with a dst of DstSize, Encode allocates
// nothing, whatever the chunk; random chunks used to grow dst (their
// frames take more than the chunk) by a new buffer each, 13 MB of garbage
// for an 8 MiB copy.
func TestEncodeDoesNotAllocate(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"text", text(64 << 10)},
		{"random", noise(64 << 10)},
		{"digits", seq(20000)[:64<<10]},
		{"text then random", append(text(40000), noise(24000+1536)...)},
		{"a short random chunk", noise(5000)},
	} {
		dst := make([]byte, 0, DstSize(len(c.data)))
		Encode(dst, c.data) // the encoder's own state, once
		if n := testing.AllocsPerRun(20, func() { Encode(dst, c.data) }); n != 0 {
			t.Errorf("%s: %v allocations per Encode, want 0", c.name, n)
		}
	}
}

// FuzzDecode: damaged stored bytes give an error or a chunk, never a
// panic or more than a chunk's worth.
func FuzzDecode(f *testing.F) {
	stored, _ := Encode(nil, text(10000))
	f.Add(stored)
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, codec := range []int{Zstd, ZstdFrames} {
			out, err := Decode(nil, data, codec)
			if err == nil && len(out) > maxChunk {
				t.Fatalf("codec %d: decoded %d bytes", codec, len(out))
			}
		}
	})
}

// FuzzDecodeRange: for any chunk and range, DecodeRange returns the
// chunk's own bytes from where it says, covering the range.
func FuzzDecodeRange(f *testing.F) {
	f.Add(text(40000), int64(16000), int64(4096))
	f.Add(text(64<<10), int64(0), int64(1<<20))
	f.Add([]byte("x"), int64(5), int64(1))
	f.Fuzz(func(t *testing.T, chunk []byte, from, n int64) {
		if len(chunk) > 64<<10 {
			chunk = chunk[:64<<10]
		}
		stored, codec := Encode(nil, chunk)
		out, start, err := DecodeRange(nil, stored, codec, from, n)
		if err != nil {
			t.Fatal(err)
		}
		if start < 0 || start+int64(len(out)) > int64(len(chunk)) || !bytes.Equal(out, chunk[start:start+int64(len(out))]) {
			t.Fatalf("%d bytes from %d are not the chunk's", len(out), start)
		}
		from, n = min(max(from, 0), maxChunk), min(max(n, 0), maxChunk)
		if from < int64(len(chunk)) && (start > from || start+int64(len(out)) < min(from+n, int64(len(chunk)))) {
			t.Fatalf("[%d,+%d) of %d bytes: got [%d,+%d)", from, n, len(chunk), start, len(out))
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

// BenchmarkDecodeRange4KiB: a 4 KiB page from inside a chunk, which
// decodes one 16 KiB frame; BenchmarkDecode64KiB is the whole chunk.
func BenchmarkDecodeRange4KiB(b *testing.B) {
	stored, codec := Encode(nil, text(64<<10))
	dst := make([]byte, 0, 64<<10)
	b.SetBytes(4 << 10)
	for b.Loop() {
		if _, _, err := DecodeRange(dst, stored, codec, 20000, 4096); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode64KiB(b *testing.B) {
	for _, c := range []struct {
		name string
		data []byte
	}{{"text", text(64 << 10)}, {"digits", seq(20000)[:64<<10]}, {"random", noise(64 << 10)}} {
		b.Run(c.name, func(b *testing.B) {
			dst := make([]byte, 0, DstSize(len(c.data)))
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				Encode(dst, c.data)
			}
		})
	}
}

// garbage is what a test hands Read when the chunk must come from the
// cache: decoding it fails, so a miss shows as an error.
var garbage = []byte("not a zstd frame")

func TestCacheRead(t *testing.T) {
	chunk := text(64 << 10)
	stored, codec := Encode(nil, chunk)
	if codec != ZstdFrames {
		t.Fatal("the test chunk did not compress")
	}
	var c Cache
	p := make([]byte, 4096)
	if _, err := c.Read(p, "out_a", 0, codec, garbage, 0); err == nil {
		t.Fatal("an empty cache served a chunk")
	}
	tests := []struct {
		name   string
		copyID string
		seq    int64
		stored []byte // garbage: must be a hit
		from   int64
		want   []byte
	}{
		{"miss decodes", "out_a", 0, stored, 0, chunk[:4096]},
		{"hit", "out_a", 0, garbage, 4096, chunk[4096:8192]},
		{"hit at the end", "out_a", 0, garbage, int64(len(chunk)) - 10, chunk[len(chunk)-10:]},
		{"hit past the end", "out_a", 0, garbage, int64(len(chunk)) + 1, nil},
		{"other chunk misses", "out_a", 1, stored, 0, chunk[:4096]},
		{"other copy misses", "out_b", 0, stored, 0, chunk[:4096]},
	}
	for _, tt := range tests {
		n, err := c.Read(p, tt.copyID, tt.seq, codec, tt.stored, tt.from)
		if err != nil || !bytes.Equal(p[:n], tt.want) {
			t.Errorf("%s: Read = %d bytes, %v; want %d bytes", tt.name, n, err, len(tt.want))
		}
	}
	if _, err := c.Read(p, "out_c", 0, codec, stored, -1); err == nil {
		t.Error("a negative offset was read")
	}
	if _, err := c.Read(p, "out_c", 0, codec, garbage, 0); err == nil || c.Len() != 3 {
		t.Errorf("a chunk that does not decode: %v, %d entries; want an error and nothing kept", err, c.Len())
	}
}

// The cache holds CacheSize chunks and replaces the oldest; Forget drops a
// copy's chunks, and only that copy's.
func TestCacheReplaceForget(t *testing.T) {
	var c Cache
	p := make([]byte, 1)
	put := func(id string, seq int64) {
		t.Helper()
		stored, codec := Encode(nil, bytes.Repeat([]byte{byte(seq)}, 1000))
		if _, err := c.Read(p, id, seq, codec, stored, 0); err != nil {
			t.Fatal(err)
		}
	}
	hit := func(id string, seq int64) bool {
		n, err := c.Read(p, id, seq, Zstd, garbage, 0)
		if err == nil && (n != 1 || p[0] != byte(seq)) {
			t.Fatalf("%s/%d: served %v", id, seq, p[:n])
		}
		return err == nil
	}
	put("out_a", 0)
	put("out_a", 0) // once only
	for i := range CacheSize - 1 {
		put("out_b", int64(i+1))
	}
	if c.Len() != CacheSize || !hit("out_a", 0) {
		t.Fatalf("%d entries, out_a/0 cached %v; want all %d, and it", c.Len(), hit("out_a", 0), CacheSize)
	}
	put("out_b", 100)
	if hit("out_a", 0) || !hit("out_b", 1) || !hit("out_b", 100) {
		t.Error("the oldest entry was not the one replaced")
	}
	c.Forget("out_x", "out_b")
	if c.Len() != 0 || hit("out_b", 1) {
		t.Errorf("Forget left %d entries", c.Len())
	}
	put("out_a", 0)
	put("out_c", 1)
	c.Forget("out_c")
	if !hit("out_a", 0) || hit("out_c", 1) {
		t.Error("Forget dropped another copy's chunk, or kept the one named")
	}
}

// Readers of many copies at once each get their own chunk's bytes (run
// with -race).
func TestCacheConcurrent(t *testing.T) {
	var c Cache
	chunks := make([][]byte, 2*CacheSize)
	stored := make([][]byte, len(chunks))
	for i := range chunks {
		chunks[i] = bytes.Repeat([]byte(fmt.Sprintf("chunk %d\n", i)), 2000)
		stored[i], _ = Encode(nil, chunks[i])
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			p := make([]byte, 100)
			for j := range 200 {
				i := (g*7 + j) % len(chunks)
				from := int64(j * 37 % 1000)
				n, err := c.Read(p, fmt.Sprintf("out_%d", i), 0, ZstdFrames, stored[i], from)
				if err != nil || !bytes.Equal(p[:n], chunks[i][from:from+100]) {
					t.Errorf("copy %d from %d: %q, %v", i, from, p[:n], err)
					return
				}
				if j%50 == 0 {
					c.Forget(fmt.Sprintf("out_%d", i))
				}
			}
		})
	}
	wg.Wait()
}

func TestTally(t *testing.T) {
	tests := []struct {
		chunks []string
		lines  int64
	}{
		{nil, 0},
		{[]string{""}, 0},
		{[]string{"a"}, 1},
		{[]string{"a\n"}, 1},
		{[]string{"a", "\n"}, 1},
		{[]string{"a\n", ""}, 1},
		{[]string{"a\n", "b"}, 2},
		{[]string{"ab", "c\nd", "\n"}, 2},
		{[]string{"\n\n", "\n"}, 3},
		{[]string{"x\r\ny\r\n"}, 2},
	}
	for _, tt := range tests {
		// Whole, and split in two tallies merged, as a backend does for
		// an append that might fail.
		for split := range len(tt.chunks) + 1 {
			var a, b Tally
			var total, stored, chunks int64
			for i, c := range tt.chunks {
				w := &a
				if i >= split {
					w = &b
				}
				w.Add([]byte(c), len(c)/2)
				total, stored = total+int64(len(c)), stored+int64(len(c)/2)
				if c != "" {
					chunks++
				}
			}
			a.Merge(b)
			if a.Lines() != tt.lines || a.Total != total || a.Stored != stored || a.Chunks != chunks {
				t.Errorf("%q (split at %d) = %d lines, %d bytes, %d stored, %d chunks; want %d, %d, %d, %d",
					tt.chunks, split, a.Lines(), a.Total, a.Stored, a.Chunks, tt.lines, total, stored, chunks)
			}
		}
	}
}

// FuzzTally: however the bytes are split into chunks, and the chunks into
// two tallies, the count is the same, and equals newlines plus one for an
// unterminated last line.
func FuzzTally(f *testing.F) {
	f.Add([]byte("a\nb"), uint16(1), uint16(2))
	f.Add([]byte("\n"), uint16(0), uint16(0))
	f.Add([]byte(""), uint16(0), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, cut, cut2 uint16) {
		want := int64(bytes.Count(data, []byte{'\n'}))
		if len(data) > 0 && data[len(data)-1] != '\n' {
			want++
		}
		i := int(cut) % (len(data) + 1)
		j := i + int(cut2)%(len(data)-i+1)
		var a, b Tally
		a.Add(data[:i], 0)
		b.Add(data[i:j], 0)
		b.Add(data[j:], 0)
		a.Merge(b)
		if got := a.Lines(); got != want || a.Total != int64(len(data)) {
			t.Fatalf("split at %d, %d: %d lines, %d bytes; want %d, %d", i, j, got, a.Total, want, len(data))
		}
	})
}

// TestCacheHitRate: readers paging forward through their own copies, 4 KiB
// a page, interleaved as a server's clients are, each decompress a chunk
// once (15 hits in 16 pages of 64 KiB) as long as there are no more of
// them than the cache holds chunks (with more, those beyond it decode one
// frame a page); random pages over many copies (the
// access of bench/mcp: 50 copies of 8 MiB) mostly miss, as any bounded
// cache would. The rates are logged.
func TestCacheHitRate(t *testing.T) {
	stored, codec := Encode(nil, bytes.Repeat([]byte("line of text\n"), 64<<10/13))
	const pagesPerChunk = 16 // 4 KiB pages of a 64 KiB chunk
	tests := []struct {
		name           string
		readers        int
		chunks         int64 // per copy
		random         bool
		minHit, maxHit float64
	}{
		{"sequential/1", 1, 8, false, 0.93, 1},
		{"sequential/50", 50, 8, false, 0.93, 1},
		{"sequential/CacheSize", CacheSize, 8, false, 0.93, 1},
		// Half the readers keep their chunks: a read from within a chunk
		// that is not cached decodes its frames without taking an entry.
		{"sequential/2xCacheSize", 2 * CacheSize, 4, false, 0.4, 0.5},
		{"random/bench-mcp", 50, 128, true, 0, 0.05},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c Cache
			r := rand.New(rand.NewPCG(1, 2))
			p := make([]byte, 4096)
			pos := make([]int64, tt.readers) // each reader's next page
			rounds := tt.chunks * pagesPerChunk
			if tt.random {
				rounds = 40 // enough to fill the cache and measure
			}
			for range rounds {
				for i := range tt.readers {
					page := pos[i]
					if tt.random {
						page = r.Int64N(tt.chunks * pagesPerChunk)
					}
					pos[i]++
					seq, from := page/pagesPerChunk, page%pagesPerChunk*4096
					if _, err := c.Read(p, fmt.Sprintf("out_%d", i), seq, codec, stored, from); err != nil {
						t.Fatal(err)
					}
				}
			}
			hits, misses := c.Stats()
			rate := float64(hits) / float64(hits+misses)
			t.Logf("%d readers, %d chunks each: %d hits, %d misses: hit rate %.3f", tt.readers, tt.chunks, hits, misses, rate)
			if rate < tt.minHit || rate > tt.maxHit {
				t.Errorf("hit rate %.3f, want %.2f to %.2f", rate, tt.minHit, tt.maxHit)
			}
		})
	}
}

// TestFewSymbols: the frames worth entropy coding when no match was found
// are told from random ones by their bytes.
func TestFewSymbols(t *testing.T) {
	hexDigits := []byte(fmt.Sprintf("%x", noise(FrameSize/2)))
	b64 := make([]byte, base64.StdEncoding.EncodedLen(FrameSize))
	base64.StdEncoding.Encode(b64, noise(FrameSize))
	for _, c := range []struct {
		name  string
		frame []byte
		want  bool
	}{
		{"text", text(FrameSize), true},
		{"digits", seq(5000)[:FrameSize], true},
		{"hex", hexDigits, true},
		{"base64", b64[:FrameSize], true},
		{"random", noise(FrameSize), false},
		{"a few random bytes", noise(100), true}, // too few to tell: try
	} {
		if got := fewSymbols(c.frame); got != c.want {
			t.Errorf("%s: fewSymbols = %v, want %v", c.name, got, c.want)
		}
	}
}
