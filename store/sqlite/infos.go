package sqlite

import (
	"sync"

	"github.com/scrollback-dev/scrollback/store"
)

// copyInfos remembers the info of the copies lately read, so that reading
// a page of one needs only its chunks from the database (readPageSQL): a
// copy's info never changes once it is readable (a pending copy is not),
// and an id names one copy for ever. The page's query still finds the
// copy in the reader's session, so a copy deleted or evicted meanwhile
// (by this process or another) reads as missing, never from here.
//
// It is safe for concurrent use.
type copyInfos struct {
	mu sync.Mutex
	m  map[string]store.CopyInfo
}

// maxCopyInfos bounds the copies remembered: a few hundred bytes each.
const maxCopyInfos = 1024

// get returns the info of copy id of session, if remembered.
func (c *copyInfos) get(session, id string) (store.CopyInfo, bool) {
	c.mu.Lock()
	info, ok := c.m[id]
	c.mu.Unlock()
	return info, ok && info.Session == session
}

// put remembers info, forgetting another copy's when full.
func (c *copyInfos) put(info store.CopyInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]store.CopyInfo)
	}
	if _, ok := c.m[info.ID]; !ok && len(c.m) >= maxCopyInfos {
		for id := range c.m { // one chosen at random
			delete(c.m, id)
			break
		}
	}
	c.m[info.ID] = info
}

// forget drops the infos of the copies ids names.
func (c *copyInfos) forget(ids ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		delete(c.m, id)
	}
}
