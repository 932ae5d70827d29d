package proxy

import (
	"bytes"
	"context"
	"io"
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

// after is wait for a request answered just now, when it carried a
// progress token (token not nil): without one, no progress of its own can
// be pending.
func (o *progressOrder) after(ctx context.Context, token any) {
	if token != nil {
		o.wait(ctx)
	}
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
			// One the handler never got (a notification the SDK refused
			// before its handler, say) must not hold every later call
			// for progressWait too: count what was read by now as done.
			o.mu.Lock()
			o.done = max(o.done, target)
			o.mu.Unlock()
			return
		case <-ctx.Done():
			return
		}
	}
}

// sseProgress passes a server-sent event stream through unchanged and
// tells ord of each progress notification among its data lines (of at
// most strayProbe bytes: a longer one is a result, not a notification).
type sseProgress struct {
	r    io.Reader
	ord  *progressOrder
	line []byte // the start of the current line
	long bool   // the current line is past strayProbe
}

func (s *sseProgress) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	for b := p[:n]; len(b) > 0; {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		if !s.long {
			if len(s.line)+len(part) > strayProbe {
				s.long, s.line = true, s.line[:0]
			} else {
				s.line = append(s.line, part...)
			}
		}
		if i < 0 {
			break
		}
		if !s.long {
			if data, ok := bytes.CutPrefix(s.line, []byte("data:")); ok {
				if ok, method := message(data); ok && method == "notifications/progress" {
					s.ord.saw()
				}
			}
		}
		s.line, s.long = s.line[:0], false
		b = b[i+1:]
	}
	return n, err
}
