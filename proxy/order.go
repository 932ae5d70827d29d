package proxy

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"
)

// noticeOrder keeps what the upstream said during a request ahead of the
// request's answer: its progress, its log messages and its word that a
// resource changed. The SDK hands the upstream's notifications to their
// handlers apart from its responses (a queue of their own), so the result
// of a call could reach the client before the last of them the upstream
// sent ahead of it: a client drops progress for a request it has the
// answer to, and one that shows logs next to the call (the MCP Inspector)
// shows them after it. The connection's reader counts the notifications
// of these kinds it reads (saw, for each method ordered says), the
// handlers those they have forwarded (handled), and a call, resource read
// or prompt waits, once its answer is in, until every one read by then is
// forwarded.
type noticeOrder struct {
	mu         sync.Mutex
	read, done int64
	wake       chan struct{} // closed when done grows
}

// noticeWait bounds the wait for a handler that is slow to forward.
const noticeWait = 2 * time.Second

func newNoticeOrder() *noticeOrder { return &noticeOrder{wake: make(chan struct{})} }

// ordered reports whether a notification of method is kept ahead of the
// answer it came before: one that belongs with the request in flight. A
// list_changed is about the server, not a request, and is not waited for.
func ordered(method string) bool {
	switch method {
	case "notifications/progress", "notifications/message", "notifications/resources/updated":
		return true
	}
	return false
}

// saw counts an ordered notification read from the upstream.
func (o *noticeOrder) saw() {
	o.mu.Lock()
	o.read++
	o.mu.Unlock()
}

// handled counts one forwarded (or dropped) by its handler. It never
// counts past what was read: a notification the reader did not count (a
// line longer than strayProbe: a log message of 100 KiB) must not leave
// done ahead of read for good, which would end every later wait before
// the notification it is for is forwarded.
func (o *noticeOrder) handled() {
	o.mu.Lock()
	o.done = min(o.done+1, o.read)
	close(o.wake)
	o.wake = make(chan struct{})
	o.mu.Unlock()
}

// wait returns once every ordered notification read so far is handled,
// or after noticeWait, or when ctx ends. A request answered just now calls
// it before passing its answer on, token or none: any request may have
// log messages of its own pending.
func (o *noticeOrder) wait(ctx context.Context) {
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
			t := time.NewTimer(noticeWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-wake:
		case <-timeout:
			// One the handler never got (a notification the SDK refused
			// before its handler, say) must not hold every later call
			// for noticeWait too: count what was read by now as done.
			o.mu.Lock()
			o.done = max(o.done, target)
			o.mu.Unlock()
			return
		case <-ctx.Done():
			return
		}
	}
}

// sseNotices passes a server-sent event stream through unchanged and
// tells ord of each ordered notification among its data lines (of at most
// strayProbe bytes: a longer one is a result, or a notification too large
// to be worth the wait).
type sseNotices struct {
	r    io.Reader
	ord  *noticeOrder
	line []byte // the start of the current line
	long bool   // the current line is past strayProbe
}

func (s *sseNotices) Read(p []byte) (int, error) {
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
				if ok, method := message(data); ok && ordered(method) {
					s.ord.saw()
				}
			}
		}
		s.line, s.long = s.line[:0], false
		b = b[i+1:]
	}
	return n, err
}
