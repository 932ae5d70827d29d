package mcpserver

import (
	"sync"
	"time"
)

// Requests of protocol 2026-07-28 have no MCP session, but making a server
// for each (registering every tool, describing run_code's) costs five
// times the call it serves. requestServers keeps the server of each
// principal and named session while it is used, as an MCP session keeps
// its own.

// Bounds of the servers kept for requests without an MCP session.
const (
	// requestServerIdle drops a server unused this long: short, so that a
	// binding never outlives its session (retention spares the sessions
	// of the servers kept, see Live).
	requestServerIdle = 5 * time.Minute
	// maxRequestServers bounds them; the one unused longest goes first.
	maxRequestServers = 256
)

type requestServers struct {
	live *Live

	mu    sync.Mutex
	m     map[string]*requestEntry
	swept time.Time
}

type requestEntry struct {
	hs     *httpSession
	last   time.Time
	unhold func()
}

// get returns the kept httpSession of key, or makes one with make and
// keeps it.
func (c *requestServers) get(key string, make func() *httpSession) *httpSession {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*requestEntry{}
	}
	if now.Sub(c.swept) > requestServerIdle/4 {
		c.swept = now
		for k, e := range c.m {
			if now.Sub(e.last) > requestServerIdle {
				c.drop(k, e)
			}
		}
	}
	if e, ok := c.m[key]; ok {
		e.last = now
		return e.hs
	}
	if len(c.m) >= maxRequestServers {
		var oldest string
		for k, e := range c.m {
			if oldest == "" || e.last.Before(c.m[oldest].last) {
				oldest = k
			}
		}
		c.drop(oldest, c.m[oldest])
	}
	hs := make()
	c.m[key] = &requestEntry{hs: hs, last: now, unhold: c.live.Hold(hs.b)}
	return hs
}

// forget drops the entry of key if it still keeps hs (a concurrent
// request may have replaced it already).
func (c *requestServers) forget(key string, hs *httpSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok && e.hs == hs {
		c.drop(key, e)
	}
}

// drop forgets an entry: its binding is done (Binding.Done), and its
// session no longer held. Requests in flight on its server finish.
func (c *requestServers) drop(key string, e *requestEntry) {
	delete(c.m, key)
	e.unhold()
	close(e.hs.b.done)
}
