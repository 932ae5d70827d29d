package mcpserver

import (
	"slices"
	"sync"
)

// Live is the set of scrollback sessions that connected clients hold: the
// binding of each MCP session open over HTTP (HTTPOptions.Live), or the
// one session a stdio server serves. A long-running server gives its
// sessions to retention, which marks them used instead of deleting them
// under a client that is merely idle (store.Housekeeper.MarkUsed). The
// zero value is empty and ready; a nil *Live holds nothing.
type Live struct {
	mu    sync.Mutex
	holds map[*Binding]int
}

// Hold adds the binding's session, once it has one, to the set until
// release is called (release may be called more than once).
func (l *Live) Hold(b *Binding) (release func()) {
	if l == nil || b == nil {
		return func() {}
	}
	l.mu.Lock()
	if l.holds == nil {
		l.holds = make(map[*Binding]int)
	}
	l.holds[b]++
	l.mu.Unlock()
	return sync.OnceFunc(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.holds[b]--; l.holds[b] <= 0 {
			delete(l.holds, b)
		}
	})
}

// Sessions returns the ids of the sessions held, sorted, each once. A
// binding that has not made its session yet (no tool call so far) holds
// none.
func (l *Live) Sessions() []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	bs := make([]*Binding, 0, len(l.holds))
	for b := range l.holds {
		bs = append(bs, b)
	}
	l.mu.Unlock()
	var ids []string
	for _, b := range bs {
		if s := b.Current(); s != nil {
			ids = append(ids, s.ID())
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}
