package sqlite

import (
	"sync"
)

// chunkBlobs keeps the stored (compressed) bytes of the chunks lately
// read, so that a later page of the same chunks asks SQLite only whether
// the copy is still in the reader's session (existsCopy: one seek in the
// small copies table) instead of seeking the chunk and copying its blob
// out of the file's pages: a random page of a big copy cost a server
// about a fifth of its CPU in SQLite, most of it the chunk's seek.
//
// What is kept cannot go stale: a copy's chunks never change once it is
// readable (a pending copy is never read, so never kept), and an id names
// one copy for ever. Existence and ownership are never taken from here:
// every read still runs a query that finds the copy by session and id in
// the database, so a copy deleted, evicted or expired meanwhile, by this
// process or another on the same file, reads as missing, and a session
// that does not hold the id reads it as missing too. Eviction here forgets
// the copy's chunks, only to give the memory back early.
//
// It holds at most maxBlobBytes of blobs in all, dropping entries at
// random when full. It is safe for concurrent use.
type chunkBlobs struct {
	mu    sync.Mutex
	m     map[blobKey]blob
	bytes int
}

type blobKey struct {
	copy string
	seq  int64
}

type blob struct {
	codec int
	data  []byte
}

// maxBlobBytes bounds the blobs kept: 32 MiB of compressed chunks, a few
// hundred MiB of text (text compresses 5–10×).
const maxBlobBytes = 32 << 20

// maxBlob is the largest blob kept: a chunk that hardly compresses is
// not worth a share of the bound.
const maxBlob = 64 << 10

// get returns chunk seq of copy id, if kept.
func (c *chunkBlobs) get(id string, seq int64) (blob, bool) {
	c.mu.Lock()
	b, ok := c.m[blobKey{id, seq}]
	c.mu.Unlock()
	return b, ok
}

// put keeps a copy of data, chunk seq of copy id as stored with codec.
func (c *chunkBlobs) put(id string, seq int64, codec int, data []byte) {
	if len(data) > maxBlob {
		return
	}
	k := blobKey{id, seq}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok {
		return
	}
	if c.m == nil {
		c.m = make(map[blobKey]blob)
	}
	for k2, b := range c.m { // full: drop entries chosen at random
		if c.bytes+len(data) <= maxBlobBytes {
			break
		}
		delete(c.m, k2)
		c.bytes -= len(b.data)
	}
	c.m[k] = blob{codec: codec, data: append([]byte(nil), data...)}
	c.bytes += len(data)
}

// forget drops the chunks of the copies ids names.
func (c *chunkBlobs) forget(ids ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, b := range c.m {
		for _, id := range ids {
			if k.copy == id {
				delete(c.m, k)
				c.bytes -= len(b.data)
				break
			}
		}
	}
}

// len returns how many chunks are kept and their bytes, for tests.
func (c *chunkBlobs) len() (n, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m), c.bytes
}
