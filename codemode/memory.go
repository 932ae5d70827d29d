package codemode

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// memoryWatch stops a run whose heap growth passes its limit. goja
// allocates on the Go heap and has no allocation hook, so the watch samples
// the heap from beside the script and interrupts it.
//
// The sample counts garbage not yet swept (the script's own, or other
// requests' in a busy server), so crossing the limit starts a collection
// to tell what is live, and the script runs on meanwhile: the collector's
// verdict decides. A collection takes milliseconds, unless the script is
// inside one huge copy (s += s on a 256 MiB string): that stalls the
// collector's stop-the-world phases for as long as the copy takes, and the
// script doubles again while the collector waits. So when the heap is past
// the limit plus a slack and the collection has been running longer than
// patience, or the heap grew by the slack in one step (64 MiB within a few
// milliseconds: one huge allocation, whose copy is still running), the
// watch interrupts without the verdict: the world stops for a collection
// while the huge copy runs, the watch with it, and the script must not
// start its next doubling before the watch has spoken. (A collection's
// live figure alone is no verdict: what others allocate while it marks
// counts as live.)
//
// The watch reads the whole process: another goroutine allocating flat out
// on a core of its own while the collection runs is counted as the
// script's, and can stop it. A verdict over the limit is therefore asked
// twice, on two collections, before the script is stopped.
//
// Its fields are the test seams: a test gives its own heap reading,
// collector and timings.
type memoryWatch struct {
	limit    uint64        // bytes the heap may grow past its size at start
	slack    uint64        // past limit+slack, a slow collection is not waited for
	patience time.Duration // how long a collection may take before that
	// jumpWindow: growth by the slack within this time is one huge
	// allocation, and is not waited on either.
	jumpWindow time.Duration
	every      time.Duration // how often the heap is read
	// heap reads the bytes held by heap objects, live or not yet swept.
	heap func() uint64
	// live reads the bytes the last completed collection found live.
	live func() uint64
	// collect runs a garbage collection and returns when it is done.
	collect func()
	// allocs reads the bytes and objects allocated so far, cumulative; nil
	// takes every fast growth for one huge allocation.
	allocs func() (bytes, objects uint64)
}

// Defaults of a memoryWatch: the heap is read often enough that a script is
// caught within the allocation step that crosses its limit; a collection
// normally ends well within patience; the slack keeps the process's peak
// under the limit plus maxSlack plus the one allocation in flight.
const (
	sampleEvery = time.Millisecond
	patience    = 250 * time.Millisecond
	jumpWindow  = 5 * time.Millisecond
	maxSlack    = 64 << 20
)

func newMemoryWatch(limit int64) *memoryWatch {
	return &memoryWatch{limit: uint64(limit), slack: maxSlack, patience: patience, jumpWindow: jumpWindow,
		every: sampleEvery, heap: heapBytes, live: liveBytes, collect: runtime.GC, allocs: allocated}
}

// start begins watching; interrupt is called once, from the watch's
// goroutine, when the limit is passed. The returned stop function ends the
// watch and reports whether it called interrupt.
func (m *memoryWatch) start(interrupt func()) (stop func() bool) {
	base := m.heap()
	done := make(chan struct{})
	var wg sync.WaitGroup
	var hit bool
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(m.every)
		defer t.Stop()
		// collected is non-nil while a collection runs; it carries the heap
		// read the moment the collection ended, before others refill it.
		var collected chan collection
		var since time.Time // when it began
		// overOnce: the last collection's verdict was over the limit. The
		// next one must say so too: what others allocate while one
		// collection marks counts as live in it, but is garbage by the next.
		overOnce := false
		prev, prevAt := base, time.Now()
		prevBytes, prevObjects := m.allocated()
		for {
			select {
			case <-done:
				return
			case c := <-collected:
				// The verdict: what the collection found live, or the
				// heap read now, whichever is less. Both overstate the
				// script's data: others' allocations during the marking
				// count as live, and their garbage since is in the heap.
				collected = nil
				v := min(m.liveGrown(base), c.after-min(c.after, base))
				if v <= m.limit {
					overOnce = false
					continue
				}
				// Less everything allocated while it ran (the script's
				// own allocations too), the verdict counts only data that
				// was there before and lived through it: the limit is
				// passed without asking again.
				if overOnce || m.allocs != nil && v-min(v, c.allocated) > m.limit {
					hit = true
					interrupt()
					return
				}
				overOnce = true
				collected, since = m.collectAsync(), time.Now()
			case <-t.C:
				now := time.Now() // not the tick's time: a late tick must not count as patience
				h := m.heap()
				g := h - min(h, base)
				// One allocation of at least the slack since a reading
				// moments ago: the script is in one huge native step.
				// Others' many allocations (a busy server's 4 MiB buffers, say)
				// can grow the heap as fast: what was allocated since must be
				// mostly one object, on average a quarter of the slack or more.
				// The reading moments ago may be long ago: a watch starved
				// of a core (a busy machine, or a collection waiting for
				// the script's huge copy to stop the world) reads late, and
				// the script must not start its next doubling meanwhile.
				// With the allocation counters the average tells one huge
				// allocation from many at any interval; without them only
				// quick succession does.
				bytes, objects := m.allocated()
				oneHuge := objects == prevObjects || (bytes-prevBytes)/max(objects-prevObjects, 1) >= m.slack/4
				grew := h - min(h, prev)
				jump := grew >= m.slack && oneHuge && (m.allocs != nil || now.Sub(prevAt) <= m.jumpWindow)
				prev, prevAt, prevBytes, prevObjects = h, now, bytes, objects
				switch {
				// Huge allocations of half the limit at once: a doubling
				// string (or array) whose next step would pass the limit
				// by itself. It is not waited for: a watch that does not
				// get a core during the next copy would see the heap only
				// after it, past the limit by the size of the data.
				case jump && grew >= m.limit/2:
					hit = true
					interrupt()
					return
				case g <= m.limit:
				case g > m.limit+m.slack && (jump || collected != nil && now.Sub(since) > m.patience):
					hit = true
					interrupt()
					return
				case collected == nil:
					collected, since = m.collectAsync(), now
				}
			}
		}
	}()
	return func() bool {
		close(done)
		wg.Wait()
		return hit
	}
}

// allocated reads the allocation counters, or zeros when the watch has
// none (then objects never change and every fast growth counts as one
// allocation).
func (m *memoryWatch) allocated() (bytes, objects uint64) {
	if m.allocs == nil {
		return 0, 0
	}
	return m.allocs()
}

// allocated reads the bytes and objects the process has allocated so far.
func allocated() (bytes, objects uint64) {
	return readMetric("/gc/heap/allocs:bytes"), readMetric("/gc/heap/allocs:objects")
}

// collection is what a collection the watch ran reports.
type collection struct {
	after     uint64 // the heap read as soon as it ended
	allocated uint64 // bytes allocated while it ran, by anyone
}

// collectAsync runs a collection beside the watch; the channel it returns
// gets its report as soon as the collection ends.
func (m *memoryWatch) collectAsync() chan collection {
	c := make(chan collection, 1)
	go func() {
		before, _ := m.allocated()
		m.collect()
		after, _ := m.allocated()
		c <- collection{after: m.heap(), allocated: after - min(after, before)}
	}()
	return c
}

// heapGrown returns how far the heap is past base.
func (m *memoryWatch) heapGrown(base uint64) uint64 {
	h := m.heap()
	return h - min(h, base)
}

// liveGrown returns how far the live heap, as the last collection found
// it, is past base.
func (m *memoryWatch) liveGrown(base uint64) uint64 {
	l := m.live()
	return l - min(l, base)
}

// heapBytes reads the bytes held by heap objects, live or not yet swept.
func heapBytes() uint64 { return readMetric("/memory/classes/heap/objects:bytes") }

// liveBytes reads the bytes of heap objects the last collection marked
// live.
func liveBytes() uint64 { return readMetric("/gc/heap/live:bytes") }

func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
