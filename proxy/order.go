package proxy

import (
	"context"
	"sync"
	"time"
)

// progressOrder keeps a call's progress ahead of its result. The SDK hands
// the upstream's notifications to their handlers apart from its responses
// (a queue of their own), so the result of a call could reach the client
// before the last progress notification the upstream sent ahead of it, and
// a client drops progress for a request it has the answer to. The
// connection's reader counts the progress notifications it reads (saw),
// the handler those it has forwarded (handled), and a call with a progress
// token waits, once its result is in, until every one read by then is
// forwarded.
type progressOrder struct {
	mu         sync.Mutex
	read, done int64
	wake       chan struct{} // closed when done grows
}

// progressWait bounds the wait for a handler that is slow to forward.
const progressWait = 2 * time.Second

func newProgressOrder() *progressOrder { return &progressOrder{wake: make(chan struct{})} }

// saw counts a progress notification read from the upstream.
func (o *progressOrder) saw() {
	o.mu.Lock()
	o.read++
	o.mu.Unlock()
}

// handled counts one forwarded (or dropped) by the handler.
func (o *progressOrder) handled() {
	o.mu.Lock()
	o.done++
	close(o.wake)
	o.wake = make(chan struct{})
	o.mu.Unlock()
}

// wait returns once every progress notification read so far is handled,
// or after progressWait, or when ctx ends.
func (o *progressOrder) wait(ctx context.Context) {
	if o == nil {
		return
	}
	o.mu.Lock()
	target := o.read
	o.mu.Unlock()
	var timeout <-chan time.Time
	for {
		o.mu.Lock()
		done, wake := o.done, o.wake
		o.mu.Unlock()
		if done >= target {
			return
		}
		if timeout == nil {
			t := time.NewTimer(progressWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-wake:
		case <-timeout:
			return
		case <-ctx.Done():
			return
		}
	}
}
