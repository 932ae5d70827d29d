package readlog

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestTake(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	var l Log
	if l.Pending() {
		t.Fatal("an empty log has reads")
	}
	if c, s := l.Take(); c != nil || s != nil {
		t.Fatalf("Take of an empty log = %v, %v", c, s)
	}
	l.Note("ses_b", "out_2", at(5))
	l.Note("ses_a", "out_1", at(3))
	l.Note("ses_a", "out_1", at(1)) // older: kept out
	l.Note("ses_a", "out_3", at(2))
	l.Note("ses_b", "out_0", at(7))
	if !l.Pending() {
		t.Fatal("Pending = false after Note")
	}
	// Sessions says the same as Take will, and forgets nothing.
	for range 2 {
		if got, want := l.Sessions(), []Read{{"ses_a", at(3)}, {"ses_b", at(7)}}; !slices.Equal(got, want) {
			t.Errorf("Sessions = %v, want %v", got, want)
		}
	}
	copies, sessions := l.Take()
	wantCopies := []Read{{"out_0", at(7)}, {"out_1", at(3)}, {"out_2", at(5)}, {"out_3", at(2)}}
	wantSessions := []Read{{"ses_a", at(3)}, {"ses_b", at(7)}}
	if !slices.Equal(copies, wantCopies) || !slices.Equal(sessions, wantSessions) {
		t.Errorf("Take = %v, %v; want %v, %v", copies, sessions, wantCopies, wantSessions)
	}
	if l.Pending() {
		t.Error("Pending = true after Take")
	}
	if s := l.Sessions(); len(s) != 0 {
		t.Errorf("Sessions after Take = %v, want none", s)
	}
	if c, _ := l.Take(); len(c) != 0 {
		t.Errorf("a second Take = %v, want nothing", c)
	}
}

// Reads noted while others take are each taken exactly once (run with
// -race).
func TestConcurrent(t *testing.T) {
	var l Log
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]int{}
	take := func() {
		c, _ := l.Take()
		mu.Lock()
		for _, r := range c {
			seen[r.ID]++
		}
		mu.Unlock()
	}
	for g := range 4 {
		wg.Go(func() {
			for i := range 500 {
				l.Note("ses_a", fmt.Sprintf("out_%d_%d", g, i), time.Now())
				if i%50 == 0 {
					take()
				}
			}
		})
	}
	wg.Wait()
	take()
	if len(seen) != 2000 {
		t.Errorf("%d reads taken, want 2000", len(seen))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s taken %d times", id, n)
		}
	}
}

// Due says once that the noted reads have waited long enough, and again
// only for reads noted after the next Take.
func TestDue(t *testing.T) {
	var l Log
	t0 := time.Unix(1000, 0)
	if l.Due(t0, time.Minute) {
		t.Error("Due with nothing noted")
	}
	l.Note("s", "a", t0)
	l.Note("s", "b", t0.Add(50*time.Second))
	if l.Due(t0.Add(59*time.Second), time.Minute) {
		t.Error("Due before the first read has waited a minute")
	}
	if !l.Due(t0.Add(time.Minute), time.Minute) {
		t.Error("not Due once the first read has waited a minute")
	}
	if l.Due(t0.Add(2*time.Minute), time.Minute) {
		t.Error("Due twice before a Take")
	}
	l.Take()
	l.Note("s", "c", t0.Add(3*time.Minute))
	if l.Due(t0.Add(3*time.Minute+59*time.Second), time.Minute) || !l.Due(t0.Add(4*time.Minute), time.Minute) {
		t.Error("after Take, Due does not count from the next read")
	}
}

// Mark runs flush once the noted reads are due, once until they are
// taken, and Wait returns only after the flush it started has ended.
func TestMark(t *testing.T) {
	var l Log
	flushes := 0
	release := make(chan struct{})
	var mu sync.Mutex
	flush := func() {
		<-release
		mu.Lock()
		flushes++
		mu.Unlock()
		l.Take()
	}
	l.Mark("ses_a", "out_1", time.Hour, flush)
	l.Mark("ses_a", "out_2", 0, flush) // due: the first read has waited 0
	l.Mark("ses_a", "out_3", 0, flush) // already claimed: no second flush
	waited := make(chan struct{})
	go func() { l.Wait(); close(waited) }()
	select {
	case <-waited:
		t.Fatal("Wait returned while a flush was under way")
	case <-time.After(10 * time.Millisecond):
	}
	close(release)
	<-waited
	mu.Lock()
	defer mu.Unlock()
	if flushes != 1 {
		t.Errorf("%d flushes, want 1", flushes)
	}
	if l.Pending() {
		t.Error("reads left after the flush took them")
	}
}

// fakeTimer is a scheduled flush the test fires itself.
type fakeTimer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func (t *fakeTimer) Stop() bool { t.stopped = true; return true }

// A read with no read or write after it is still written down once it has
// waited: Mark schedules the flush for then. It used to be written only
// when a later read found it due, so a server that read a copy once kept
// that read to itself until it closed, and another process's save
// evicted the copy as if nobody had read it.
func TestMarkSchedulesFlush(t *testing.T) {
	var timers []*fakeTimer
	old := afterFunc
	afterFunc = func(d time.Duration, f func()) stopper {
		tm := &fakeTimer{d: d, f: f}
		timers = append(timers, tm)
		return tm
	}
	defer func() { afterFunc = old }()

	var l Log
	flushes := 0
	flush := func() { flushes++; l.Take() }
	l.Mark("ses_a", "out_1", time.Minute, flush)
	l.Mark("ses_a", "out_2", time.Minute, flush)
	if len(timers) != 1 {
		t.Fatalf("%d flushes scheduled for two reads, want 1", len(timers))
	}
	if d := timers[0].d; d <= 0 || d > time.Minute {
		t.Errorf("flush scheduled in %v, want within a minute", d)
	}
	if flushes != 0 {
		t.Fatalf("flushed before the reads were due")
	}
	timers[0].f()
	if flushes != 1 || l.Pending() {
		t.Fatalf("the scheduled flush: %d flushes, reads left %v; want 1, none", flushes, l.Pending())
	}

	// A write took the reads before the timer fired: nothing to do.
	l.Mark("ses_a", "out_3", time.Minute, flush)
	if len(timers) != 2 {
		t.Fatalf("no flush scheduled for a read after the first flush")
	}
	l.Take()
	timers[1].f()
	if flushes != 1 {
		t.Errorf("the timer flushed reads a write had taken")
	}

	// Wait (a backend's Close) stops the timer; the close writes the reads.
	l.Mark("ses_a", "out_4", time.Minute, flush)
	l.Wait()
	if len(timers) != 3 || !timers[2].stopped {
		t.Fatalf("Wait did not stop the scheduled flush")
	}
	timers[2].f() // fired as it was being stopped
	if flushes != 1 || !l.Pending() {
		t.Errorf("a flush ran after Wait: %d flushes, reads left %v", flushes, l.Pending())
	}
}
