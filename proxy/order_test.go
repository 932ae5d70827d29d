package proxy

import (
	"context"
	"testing"
)

// TestProgressOrderResyncs: a progress notification read but never
// handled (the SDK refused it before its handler) holds one call for
// noticeWait, not every later one: after the wait, what was read counts
// as done.
func TestProgressOrderResyncs(t *testing.T) {
	o := newNoticeOrder()
	o.saw()
	o.saw()
	o.handled() // the second never reaches the handler
	o.wait(context.Background())
	o.mu.Lock()
	read, done := o.read, o.done
	o.mu.Unlock()
	if done != read {
		t.Errorf("after the wait: read %d, done %d; a later call would wait again for the one never handled", read, done)
	}
	// A notification read later is waited for as before.
	o.saw()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { o.handled(); cancel() }()
	o.wait(ctx)
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done != o.read {
		t.Errorf("read %d, done %d after the later one was handled", o.read, o.done)
	}
}

// TestNoticeOrderUncounted: a notification the reader did not count (a
// line longer than strayProbe, a log message of 100 KiB say) but its
// handler did forward must not make a later wait end before the one the
// reader did count is forwarded: handled never counts past what was read.
func TestNoticeOrderUncounted(t *testing.T) {
	o := newNoticeOrder()
	o.handled() // the long one: forwarded, never counted
	o.saw()     // the next one, not yet forwarded
	o.mu.Lock()
	read, done := o.read, o.done
	o.mu.Unlock()
	if done >= read {
		t.Errorf("read %d, done %d: a wait now would not wait for the one read and not yet forwarded", read, done)
	}
}
