// Package chunkcodec is how the SQLite and PostgreSQL backends store one
// chunk of a copy: compressed with zstd when that saves space, raw
// otherwise (output that is already compressed, or random). A chunk's codec
// is stored beside it, so raw chunks written before compression existed
// read as they always did. Offsets never see any of this: they count bytes
// of the uncompressed text.
package chunkcodec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Codec ids, as stored in the chunks table. Append, never renumber.
const (
	Raw  = 0 // the chunk's bytes as they are
	Zstd = 1 // one zstd frame holding the chunk's bytes
	// ZstdFrames: the chunk cut into FrameSize pieces, each its own zstd
	// frame, behind an index of their compressed sizes (see Encode), so
	// that a page within the chunk decompresses only the frames it
	// covers. What Encode writes.
	ZstdFrames = 2
)

// FrameSize is how many bytes of a chunk one ZstdFrames frame holds (the
// last one may hold fewer). Smaller frames make a random page cheaper to
// decompress and compress less well: at 16 KiB a 4 KiB page decompresses
// a quarter of a 64 KiB chunk (a second frame when it straddles two),
// and typical output still compresses 5-7x.
const FrameSize = 16 << 10

// maxChunk bounds what Decode will produce, so that a damaged row cannot
// make it allocate without limit. Chunks are store.ChunkSize (64 KiB); the
// margin is for future sizes.
const maxChunk = 1 << 20

var (
	encoders encoderPool
	decOnce  sync.Once
	dec      *zstd.Decoder
)

// encoderPair is what one Encode call uses: fast, and lits once a frame
// needs it.
//
// The fastest level gives 5-20x on text output at a few hundred MB/s; no
// checksum (SQLite and PostgreSQL keep the bytes intact; a damaged frame
// still fails to decode).
//
// The fastest level stores a block in which it found no match raw,
// without entropy coding its bytes. `seq 1 100000` is such text (its
// repeats are shorter than the fastest match finder looks for): every
// frame of it stayed raw (1.00x), where Huffman coding of its eleven
// symbols alone makes 0.41x (zstd -1 0.42x). lits codes such blocks'
// bytes too; it costs four times as much as fast on random bytes, which
// no coding shrinks, so Encode asks it only for frames fast left raw whose
// bytes are few enough to code in fewer bits (see fewSymbols).
type encoderPair struct{ fast, lits *zstd.Encoder }

// encoderPool lends encoderPairs, each to one Encode call at a time, the
// one given back last first, and makes one when none is free. A zstd
// Encoder of its own hands out its GOMAXPROCS states in turn, so one
// writer calling it chunk after chunk would touch every state's memory
// (a 256 KiB match table and its buffers each, fresh pages that fault in
// on first use: about 2 ms a state in a short-lived scrollback run);
// single-state encoders lent last-in first-out keep a lone writer (the
// CLI, SQLite's one writer) on one, and a server makes as many as it
// compresses chunks at once. Not a sync.Pool: that drops what it holds
// within two garbage collections, and a server would make its encoders,
// and fault their memory in, again and again.
type encoderPool struct {
	mu   sync.Mutex
	free []*encoderPair
}

func (p *encoderPool) get() *encoderPair {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		e := p.free[n-1]
		p.free = p.free[:n-1]
		return e
	}
	return &encoderPair{fast: newEncoder(false)}
}

func (p *encoderPool) put(e *encoderPair) {
	p.mu.Lock()
	p.free = append(p.free, e)
	p.mu.Unlock()
}

// litsEncoder is e.lits, made on first use.
func (e *encoderPair) litsEncoder() *zstd.Encoder {
	if e.lits == nil {
		e.lits = newEncoder(true)
	}
	return e.lits
}

// newEncoder makes a single-state encoder at the fastest level, entropy
// coding the literals of blocks without a match when lits is set.
func newEncoder(lits bool) *zstd.Encoder {
	opts := []zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false), zstd.WithWindowSize(1 << 17)}
	if lits {
		opts = append(opts, zstd.WithAllLitEntropyCompression(true))
	}
	e, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		panic("chunkcodec: " + err.Error()) // only for invalid options
	}
	return e
}

// fewSymbols reports whether frame, judged by a sample of 1024 of its
// bytes, uses few enough distinct byte values (under 192) for Huffman
// coding to save a sixteenth of it: text, digits, hex, base64 do; random
// or compressed bytes (about 250 values in the sample) do not.
func fewSymbols(frame []byte) bool {
	var seen [256]bool
	distinct := 0
	step := max(len(frame)/1024, 1)
	for i := 0; i < len(frame); i += step {
		if !seen[frame[i]] {
			seen[frame[i]] = true
			if distinct++; distinct >= 192 {
				return false
			}
		}
	}
	return true
}

func decoder() *zstd.Decoder {
	decOnce.Do(func() {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxChunk))
		if err != nil {
			panic("chunkcodec: " + err.Error())
		}
		dec = d
	})
	return dec
}

// Encode returns what to store for chunk src and its codec: src compressed
// into dst[:0] when that saves at least a sixteenth of its size, else src
// itself with Raw. The saving threshold keeps nearly incompressible data
// raw, where decompressing it would cost reads time for little space.
//
// Compressed, a chunk is ZstdFrames: the number of frames as a uvarint,
// each frame's compressed size as a uvarint, then the frames one after the
// other, frame i holding bytes [i*FrameSize, (i+1)*FrameSize) of src.
func Encode(dst, src []byte) ([]byte, int) {
	if len(src) == 0 {
		return src, Raw
	}
	n := (len(src) + FrameSize - 1) / FrameSize
	if n > maxFrames {
		return src, Raw // more than a chunk: not a chunk of this store
	}
	// The frames go after room for the largest index; the index is then
	// written just before them.
	room := 1 + n*binary.MaxVarintLen32
	out := append(dst[:0], make([]byte, room)...)
	limit := len(src) - len(src)/16 // the most a chunk stored compressed takes
	var sizes [maxFrames]int
	e := encoders.get()
	defer encoders.put(e)
	for i := range n {
		before := len(out)
		frame := src[i*FrameSize : min(len(src), (i+1)*FrameSize)]
		out = e.fast.EncodeAll(frame, out)
		if len(out)-before >= len(frame) && fewSymbols(frame) {
			// Left raw: no match found; its bytes may code smaller.
			out = e.litsEncoder().EncodeAll(frame, out[:before])
		}
		sizes[i] = len(out) - before
		if len(out)-room > limit {
			// It cannot save enough now, whatever the frames left: raw,
			// before out outgrows DstSize (random data, mostly).
			return src, Raw
		}
	}
	var index [1 + maxFrames*binary.MaxVarintLen32]byte
	k := binary.PutUvarint(index[:], uint64(n))
	for _, size := range sizes[:n] {
		k += binary.PutUvarint(index[k:], uint64(size))
	}
	start := room - k
	copy(out[start:], index[:k])
	c := out[start:]
	if len(c) <= limit {
		return c, ZstdFrames
	}
	return src, Raw
}

// DstSize is the capacity of a dst that Encode never outgrows for a chunk
// of n bytes: Encode gives up on compressing once its frames take more
// than the chunk, so what it writes is the room for the index, at most n
// bytes of frames, and one more frame of at most FrameSize bytes and its
// headers.
func DstSize(n int) int {
	return 1 + maxFrames*binary.MaxVarintLen32 + n + FrameSize + 64
}

// maxFrames bounds the frames of one chunk: maxChunk's worth.
const maxFrames = maxChunk / FrameSize

// Decode returns the chunk's bytes: data itself for Raw, or data
// decompressed into dst[:0].
func Decode(dst, data []byte, codec int) ([]byte, error) {
	out, _, err := DecodeRange(dst, data, codec, 0, maxChunk)
	return out, err
}

// DecodeRange returns at least the bytes [from, from+n) of the chunk, as
// far as it has them, and where in the chunk what it returns begins: all
// of it, from 0, for Raw and Zstd; for ZstdFrames only the frames those
// bytes lie in, decompressed into dst[:0] (none when from is past the
// chunk's end). A chunk that does not decode, or decodes to frames of the
// wrong sizes, is an error.
func DecodeRange(dst, data []byte, codec int, from, n int64) (out []byte, start int64, err error) {
	switch codec {
	case Raw:
		return data, 0, nil
	case Zstd:
		out, err := decoder().DecodeAll(data, dst[:0])
		if err != nil {
			return nil, 0, fmt.Errorf("decompress chunk: %w", err)
		}
		if len(out) > maxChunk {
			return nil, 0, fmt.Errorf("decompress chunk: %d bytes, more than a chunk holds", len(out))
		}
		return out, 0, nil
	case ZstdFrames:
		return decodeFrames(dst, data, from, n)
	}
	return nil, 0, fmt.Errorf("chunk codec %d is unknown to this program (a newer scrollback wrote it)", codec)
}

// decodeFrames is DecodeRange for ZstdFrames.
func decodeFrames(dst, data []byte, from, n int64) ([]byte, int64, error) {
	count, k := binary.Uvarint(data)
	if k <= 0 || count == 0 || count > maxFrames {
		return nil, 0, errors.New("decompress chunk: its frame index is damaged")
	}
	var sizes [maxFrames]uint64
	total := uint64(0)
	for i := range count {
		size, m := binary.Uvarint(data[k:])
		if m <= 0 || size > uint64(len(data)) {
			return nil, 0, errors.New("decompress chunk: its frame index is damaged")
		}
		sizes[i], k, total = size, k+m, total+size
	}
	if total != uint64(len(data)-k) {
		return nil, 0, fmt.Errorf("decompress chunk: its index counts %d bytes of frames, it holds %d", total, len(data)-k)
	}
	from, n = min(max(from, 0), maxChunk), min(max(n, 0), maxChunk)
	first := min(uint64(from/FrameSize), count-1)
	last := min(uint64(max(from+n-1, from)/FrameSize), count-1)
	pos := uint64(k)
	for i := range first {
		pos += sizes[i]
	}
	out := dst[:0]
	for i := first; i <= last; i++ {
		before := len(out)
		var err error
		out, err = decoder().DecodeAll(data[pos:pos+sizes[i]], out)
		if err != nil {
			return nil, 0, fmt.Errorf("decompress chunk: frame %d: %w", i, err)
		}
		if got := len(out) - before; got > FrameSize || got < FrameSize && i < count-1 || got == 0 {
			return nil, 0, fmt.Errorf("decompress chunk: frame %d holds %d bytes; every frame but the last holds %d", i, got, FrameSize)
		}
		pos += sizes[i]
	}
	return out, int64(first) * FrameSize, nil
}
