// Package chunkcodec is how the SQLite and PostgreSQL backends store one
// chunk of a copy: compressed with zstd when that saves space, raw
// otherwise (output that is already compressed, or random). A chunk's codec
// is stored beside it, so raw chunks written before compression existed
// read as they always did. Offsets never see any of this: they count bytes
// of the uncompressed text.
package chunkcodec

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Codec ids, as stored in the chunks table. Append, never renumber.
const (
	Raw  = 0 // the chunk's bytes as they are
	Zstd = 1 // one zstd frame holding the chunk's bytes
)

// maxChunk bounds what Decode will produce, so that a damaged row cannot
// make it allocate without limit. Chunks are store.ChunkSize (64 KiB); the
// margin is for future sizes.
const maxChunk = 1 << 20

var (
	encOnce sync.Once
	enc     *zstd.Encoder
	decOnce sync.Once
	dec     *zstd.Decoder
)

func encoder() *zstd.Encoder {
	encOnce.Do(func() {
		// EncodeAll is safe for concurrent use; each call borrows one of
		// the encoder's states. The default level gives 5-20x on text
		// output at a few hundred MB/s; one frame per chunk, no checksum
		// (SQLite and PostgreSQL keep the bytes intact; a damaged frame
		// still fails to decode).
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderCRC(false), zstd.WithWindowSize(1<<17))
		if err != nil {
			panic("chunkcodec: " + err.Error()) // only for invalid options
		}
		enc = e
	})
	return enc
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
func Encode(dst, src []byte) ([]byte, int) {
	if len(src) == 0 {
		return src, Raw
	}
	c := encoder().EncodeAll(src, dst[:0])
	if len(c) <= len(src)-len(src)/16 {
		return c, Zstd
	}
	return src, Raw
}

// Decode returns the chunk's bytes: data itself for Raw, or data
// decompressed into dst[:0] for Zstd.
func Decode(dst, data []byte, codec int) ([]byte, error) {
	switch codec {
	case Raw:
		return data, nil
	case Zstd:
		out, err := decoder().DecodeAll(data, dst[:0])
		if err != nil {
			return nil, fmt.Errorf("decompress chunk: %w", err)
		}
		if len(out) > maxChunk {
			return nil, fmt.Errorf("decompress chunk: %d bytes, more than a chunk holds", len(out))
		}
		return out, nil
	}
	return nil, fmt.Errorf("chunk codec %d is unknown to this program (a newer scrollback wrote it)", codec)
}
