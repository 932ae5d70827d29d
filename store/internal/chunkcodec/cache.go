package chunkcodec

import "sync"

// Cache keeps the last few decompressed chunks, so that paging forward
// through a compressed copy (the usual way to read one: a page at a time,
// each starting where the last ended) decompresses each chunk once, not
// once per page. Copies never change once saved and their ids are never
// reused, so an entry is never stale; the caller still looks the copy up
// in the database first, so an evicted copy is never served from here.
// It is safe for concurrent use.
type Cache struct {
	mu      sync.Mutex
	entries [cacheSize]cacheEntry
	next    int // the entry to replace next
}

const cacheSize = 8 // 512 KiB of 64 KiB chunks

type cacheEntry struct {
	copy string
	seq  int64
	data []byte
}

// ReadAt copies the bytes of chunk seq of copy from offset from into p and
// reports whether the chunk was cached. n is how many bytes it copied.
func (c *Cache) ReadAt(copyID string, seq int64, p []byte, from int64) (n int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.entries {
		e := &c.entries[i]
		if e.data != nil && e.seq == seq && e.copy == copyID {
			if from >= int64(len(e.data)) {
				return 0, true
			}
			return copy(p, e.data[from:]), true
		}
	}
	return 0, false
}

// Put remembers a copy of chunk seq's decompressed bytes.
func (c *Cache) Put(copyID string, seq int64, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := &c.entries[c.next]
	c.next = (c.next + 1) % cacheSize
	e.copy, e.seq = copyID, seq
	e.data = append(e.data[:0], data...)
}
