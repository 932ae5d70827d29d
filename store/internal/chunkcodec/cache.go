package chunkcodec

import (
	"fmt"
	"sync"
)

// Cache keeps the last few decompressed chunks, so that paging forward
// through a compressed copy (the usual way to read one: a page at a time,
// each starting where the last ended) decompresses each chunk once, not
// once per page. Both backends keep one per open database and read every
// compressed chunk through Read.
//
// An entry can never be stale. It is keyed by the copy's id and the
// chunk's number; a copy's chunks never change once it is readable, and
// ids are 128 random bits, never reused, so an id names one content for
// ever. And a backend consults the cache only for a chunk its query has
// just returned, in the same statement that found the copy in the
// reader's session: a copy that was evicted or deleted (by this process
// or another) returns no rows, so the reader gets the evicted or
// not-found error, never bytes from here. Forget drops a copy's entries
// early, to give their memory back.
//
// It is safe for concurrent use.
type Cache struct {
	mu           sync.Mutex
	entries      [CacheSize]cacheEntry
	next         int   // the entry to replace next
	hits, misses int64 // reads served from an entry, and decoded
}

// CacheSize is how many chunks a Cache keeps: 4 MiB of 64 KiB chunks, so
// that a server's readers paging forward each keep their chunk while as
// many others read in between (one chunk each: 64 readers). Random reads
// over more than 4 MiB of copies mostly miss whatever the size, and each
// miss from inside a chunk decompresses the frame it needs (about 15 µs
// for 16 KiB of text; the whole chunk takes about 70 µs).
const CacheSize = 64

type cacheEntry struct {
	copy string
	seq  int64
	data []byte // nil: the entry is free
}

// chunkBufs holds scratch buffers for decompressing one chunk.
var chunkBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// Read copies into p the bytes of chunk seq of copy copyID from offset from
// within the chunk, which the database stores as stored with codec (not
// Raw: a raw chunk's bytes are read as they are). It takes them from the
// cache when the chunk is there, else decodes stored and keeps the result.
// n is less than len(p) when the chunk ends first, and 0 when from is at
// or past its end; the caller's length checks say a copy is damaged. err
// says the chunk does not decode.
func (c *Cache) Read(p []byte, copyID string, seq int64, codec int, stored []byte, from int64) (n int, err error) {
	if from < 0 {
		return 0, fmt.Errorf("chunk %d: offset %d is negative", seq, from)
	}
	if n, ok := c.readCached(p, copyID, seq, from); ok {
		return n, nil
	}

	buf := chunkBufs.Get().(*[]byte)
	defer chunkBufs.Put(buf)
	// A read from within a ZstdFrames chunk (a random page, most likely,
	// or a reader's first page in this copy) decompresses only the frames
	// it covers, and keeps nothing. A reader paging forward enters each
	// next chunk at its start, and that read decompresses the whole chunk
	// and keeps it for the pages after.
	whole, want := codec != ZstdFrames || from == 0, int64(len(p))
	if whole {
		want = maxChunk
	}
	data, start, err := DecodeRange(*buf, stored, codec, from, want)
	if err != nil {
		return 0, fmt.Errorf("chunk %d: %w", seq, err)
	}
	if whole {
		c.put(copyID, seq, data)
	} else {
		c.mu.Lock()
		c.misses++
		c.mu.Unlock()
	}
	if from-start >= int64(len(data)) {
		return 0, nil
	}
	return copy(p, data[from-start:]), nil
}

// readCached copies from the cached chunk, and reports whether there was
// one.
func (c *Cache) readCached(p []byte, copyID string, seq, from int64) (n int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.entries {
		e := &c.entries[i]
		if e.data != nil && e.seq == seq && e.copy == copyID {
			c.hits++
			if from >= int64(len(e.data)) {
				return 0, true
			}
			return copy(p, e.data[from:]), true
		}
	}
	return 0, false
}

// put keeps a copy of chunk seq's decompressed bytes in place of the
// oldest entry, reusing its buffer.
func (c *Cache) put(copyID string, seq int64, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.misses++
	for i := range c.entries {
		if e := &c.entries[i]; e.data != nil && e.seq == seq && e.copy == copyID {
			return // another reader kept it meanwhile
		}
	}
	e := &c.entries[c.next]
	c.next = (c.next + 1) % CacheSize
	e.copy, e.seq = copyID, seq
	e.data = append(e.data[:0], data...)
	if e.data == nil { // an empty chunk: still an entry
		e.data = []byte{}
	}
}

// Forget drops the entries of the copies ids names.
func (c *Cache) Forget(ids ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.entries {
		e := &c.entries[i]
		for _, id := range ids {
			if e.data != nil && e.copy == id {
				e.copy, e.data = "", nil // free; the buffer goes too
				break
			}
		}
	}
}

// Stats returns how many reads the cache has served from an entry (hits)
// and how many decoded their chunk (misses; a chunk that failed to decode
// is neither).
func (c *Cache) Stats() (hits, misses int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

// Len returns how many chunks the cache holds, for tests.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, e := range c.entries {
		if e.data != nil {
			n++
		}
	}
	return n
}
