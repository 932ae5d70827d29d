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
// verdict decides. A collection takes milliseconds on an idle machine, a
// second on a busy one, unless the script is inside one huge copy (s += s
// on a 256 MiB string): that stalls the collector's stop-the-world phases
// for as long as the copy takes, the watch with them, and the script
// doubles again while they wait. So huge allocations are not waited for:
// one of three eighths of the limit or more (told from many smaller ones
// by the runtime's allocation counters) stops the script at once, under
// its limit, since its next doubling would pass it; so does the heap past
// the limit plus a slack when it grew by the slack in huge allocations,
// or when the collection has been running longer than patience.
//
// The watch reads the whole process: another goroutine allocating flat out
// while the collection runs is counted as the script's, since what others
// allocate while it marks counts as live. A verdict over the limit is
// therefore asked twice, on two collections, before the script is
// stopped, unless it is over the limit by more than all that was allocated
// while the collection ran: that data was there before it. (Another
// goroutine's huge allocation, a buffer of 96 MiB, is taken for the
// script's.)
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
	// allocs reads the allocation counters, cumulative; nil takes every
	// fast growth for one huge allocation.
	allocs func() allocCounts
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
		prevAllocs := m.allocated()
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
				allocs := m.allocated()
				oneHuge := m.allocs == nil || allocs.sinceHuge(prevAllocs, m.slack/4)
				// How much the huge allocations were: the heap's growth
				// understates it when the collector freed garbage
				// meanwhile (a doubling string's last halves), the
				// counters do not.
				grew := h - min(h, prev)
				if m.allocs != nil {
					grew = max(grew, allocs.large-min(allocs.large, prevAllocs.large))
				}
				jump := grew >= m.slack && oneHuge && (m.allocs != nil || now.Sub(prevAt) <= m.jumpWindow)
				prev, prevAt, prevAllocs = h, now, allocs
				switch {
				// Huge allocations of three eighths of the limit or more
				// (the runtime's count of a 128 MiB string is a little
				// under half of 256 MiB): a doubling string, or array,
				// whose next step passes the limit by itself. It is not
				// waited for. The next step is an allocation and then a
				// copy the runtime cannot preempt; a collection that
				// wants to stop the world during the copy stops the
				// watch with it, and a busy machine can keep the watch
				// off a core for a second or more while the script runs:
				// measured, a watch that waited for the step that passes
				// the limit often saw the heap only two doublings later.
				case jump && grew >= m.limit*3/8:
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

// allocCounts are the process's allocation counters.
type allocCounts struct {
	bytes  uint64 // bytes allocated, in objects of any size
	large  uint64 // bytes allocated in large objects (over 32 KiB), at least
	largeN uint64 // large objects allocated
}

// sinceHuge tells whether what was allocated since prev was mostly one
// huge object or a few: large objects of at least min bytes on average.
// Many smaller ones (a busy server's 4 MiB buffers, say, or millions of
// small objects) are not.
func (c allocCounts) sinceHuge(prev allocCounts, min uint64) bool {
	n := c.largeN - prev.largeN
	return n > 0 && (c.large-prev.large)/n >= min
}

// allocated reads the allocation counters, or zeros when the watch has
// none.
func (m *memoryWatch) allocated() allocCounts {
	if m.allocs == nil {
		return allocCounts{}
	}
	return m.allocs()
}

// allocated reads the process's allocation counters. The runtime counts
// large objects by number only: their bytes are the total less the small
// objects' at the most their size class holds, so an estimate on the low
// side.
func allocated() allocCounts {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs-by-size:bytes"}}
	metrics.Read(s)
	var c allocCounts
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindFloat64Histogram {
		return c
	}
	c.bytes = s[0].Value.Uint64()
	h := s[1].Value.Float64Histogram()
	small := uint64(0)
	for i, n := range h.Counts {
		// Bucket i holds sizes from Buckets[i] to Buckets[i+1].
		if h.Buckets[i] > 32<<10 {
			c.largeN += n
		} else {
			small += n * uint64(min(h.Buckets[i+1], 32<<10))
		}
	}
	c.large = c.bytes - min(c.bytes, small)
	return c
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
		before := m.allocated().bytes
		m.collect()
		after := m.allocated().bytes
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
