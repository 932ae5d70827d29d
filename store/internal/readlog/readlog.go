// Package readlog notes which copies were read, and when, between a
// backend's write transactions. Eviction goes by when a copy was last read,
// but writing that down on every page read would make each read a write;
// so both backends note reads here and write them down with their next
// write (a save, housekeeping, Close).
package readlog

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// Log is the reads noted and not yet written down. The zero value is
// empty and ready; it is safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	reads   map[string]mark // by copy id
	since   time.Time       // when the first of reads was noted
	claimed bool            // Due said so since the last Take
	timer   stopper         // the flush Mark scheduled, not yet fired, or nil
	closed  bool            // Wait was called: no more flushes start

	// flushing counts the flushes Mark started and that have not ended;
	// Wait waits for them.
	flushing sync.WaitGroup
}

// stopper is the part of *time.Timer a scheduled flush needs.
type stopper interface{ Stop() bool }

// afterFunc is time.AfterFunc; tests replace it to fire a scheduled flush
// themselves.
var afterFunc = func(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) }

type mark struct {
	session string
	at      time.Time
}

// Read is the latest read of one copy, or the latest use of one session.
type Read struct {
	ID string
	At time.Time
}

// Note records that copy id of session was read at at.
func (l *Log) Note(session, id string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reads == nil {
		l.reads = map[string]mark{}
		l.since = at
	}
	if m, ok := l.reads[id]; !ok || at.After(m.at) {
		l.reads[id] = mark{session: session, at: at}
	}
}

// Mark notes that copy id of session was read now and, once the reads
// noted have waited every for a write to carry them (see Due), runs flush
// in a goroutine of its own to write them down: at a later Mark that
// finds them due, else when a timer Mark sets for that moment fires, so
// that a read with no read or write after it (a server that read a copy
// once and waits for its client) is written down all the same. Flush
// should Take the reads and write them, best effort: a lost read time
// only makes that copy a little more likely to be evicted. Wait waits
// for the flushes under way.
func (l *Log) Mark(session, id string, every time.Duration, flush func()) {
	at := time.Now()
	l.Note(session, id, at)
	if l.Due(at, every) {
		l.mu.Lock()
		if l.closed {
			l.mu.Unlock()
			return
		}
		l.flushing.Add(1)
		l.mu.Unlock()
		go func() {
			defer l.flushing.Done()
			flush()
		}()
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer == nil && !l.closed && !l.claimed && len(l.reads) > 0 {
		l.timer = afterFunc(l.since.Add(every).Sub(at), func() { l.fire(flush) })
	}
}

// fire is the timer Mark set: it flushes the reads noted, unless a write
// took them first, a flush is under way or Wait was called. (A write may
// have taken the reads the timer was set for and newer ones been noted
// since: they are written down a little early, which does no harm.)
func (l *Log) fire(flush func()) {
	l.mu.Lock()
	l.timer = nil
	ok := !l.closed && !l.claimed && len(l.reads) > 0
	if ok {
		l.claimed = true
		l.flushing.Add(1)
	}
	l.mu.Unlock()
	if ok {
		defer l.flushing.Done()
		flush()
	}
}

// Wait stops the flush Mark scheduled and waits for the flushes under way
// to end; no flush starts after it. A backend calls it in Close, before
// it writes down what is still noted.
func (l *Log) Wait() {
	l.mu.Lock()
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.mu.Unlock()
	l.flushing.Wait()
}

// Pending reports whether reads were noted since the last Take.
func (l *Log) Pending() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.reads) > 0
}

// Sessions returns each session's latest noted use (the latest read of
// its copies) since the last Take, sorted by id, and forgets nothing: it
// lets a backend count what housekeeping would see without writing the
// reads down.
func (l *Log) Sessions() []Read {
	l.mu.Lock()
	last := map[string]time.Time{}
	for _, m := range l.reads {
		if m.at.After(last[m.session]) {
			last[m.session] = m.at
		}
	}
	l.mu.Unlock()
	var sessions []Read
	for _, s := range slices.Sorted(maps.Keys(last)) {
		sessions = append(sessions, Read{ID: s, At: last[s]})
	}
	return sessions
}

// Due reports whether the reads noted have waited every or longer at now
// for a write to carry them, so that the caller should write them down
// itself (a process that only reads: another process's eviction would
// otherwise never see them). It says so once until the next Take.
func (l *Log) Due(now time.Time, every time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.reads) == 0 || l.claimed || now.Sub(l.since) < every {
		return false
	}
	l.claimed = true
	return true
}

// Take returns the reads noted since the last Take, and forgets them: each
// copy's latest read and each session's latest (the latest read of its
// copies), both sorted by id, so that writers that lock rows in this order
// cannot deadlock with each other. Should writing them fail, they are
// lost, which only makes those copies a little more likely to be evicted.
func (l *Log) Take() (copies, sessions []Read) {
	l.mu.Lock()
	reads := l.reads
	l.reads, l.claimed = nil, false
	l.mu.Unlock()
	last := map[string]time.Time{}
	for _, id := range slices.Sorted(maps.Keys(reads)) {
		m := reads[id]
		copies = append(copies, Read{ID: id, At: m.at})
		if m.at.After(last[m.session]) {
			last[m.session] = m.at
		}
	}
	for _, s := range slices.Sorted(maps.Keys(last)) {
		sessions = append(sessions, Read{ID: s, At: last[s]})
	}
	return copies, sessions
}
