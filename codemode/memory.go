package codemode

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// memoryWatch stops a run whose heap growth passes its limit. goja
// allocates on the Go heap and has no allocation hook, so the watch samples
// the heap from beside the script and interrupts it.
//
// The sample counts garbage not yet swept (the script's own, or other
// requests' in a busy server), so crossing the limit starts a collection
// to tell what is live, and the script runs on meanwhile: the collector's
// verdict decides. The verdict is the marking's result, read as soon as a
// cycle's count moves (runtime.GC goes on to sweep the whole heap before
// it returns, tens to hundreds of milliseconds for a heap of the limit's
// size in small objects, which the verdict does not need), and every
// cycle that ends is one, the runtime's own too: near the limit, under
// the lowered soft limit (softlimit.go), the runtime collects by itself.
// A marking takes milliseconds on an idle machine, a second on a busy one,
// unless the script is inside one huge copy (s += s
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
// while a cycle marks is counted as the script's, since what others
// allocate while it marks counts as live. A verdict over the limit is
// therefore asked twice, on two successive cycles, before the script is
// stopped, unless it is over the limit by more than all that was allocated
// since the cycle began: that data was there before it. When a cycle
// began is known only from readings: the one before the watch asked for
// its collection, when no other forced cycle of this package (forcers)
// can have been under way, or any taken while the cycle count was two
// less. (Another goroutine's huge allocation, a buffer of 96 MiB, is
// taken for the script's; so is, for the once rule, a runtime.GC call of
// other code under way when the watch asks for its own.) After a verdict
// under the limit, the live heap can have grown since by no more than was
// allocated since: no collection is asked for until that could pass the
// limit, however much garbage the heap reads.
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
	// cycles reads the collector's completed cycles; a cycle's end
	// updates live with it, so live is read after it. nil counts the
	// collections collect ran, and only those.
	cycles func() gcCycles
	// collect runs a garbage collection and returns when it is done.
	collect func()
	// allocs reads the allocation counters, cumulative; nil takes every
	// fast growth for one huge allocation.
	allocs func() allocCounts
	// data reads how far the process's data segment has grown since the
	// run began, where the operating system bounds it (a worker on Linux:
	// RLIMIT_DATA, HardGrowth past the bound); nil, or ok false, where
	// it does not.
	data func() (grown uint64, ok bool)
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
		every: sampleEvery, heap: heapBytes, live: liveBytes, cycles: readCycles, collect: runtime.GC, allocs: allocated}
}

// start begins watching; interrupt is called once, from the watch's
// goroutine, when the limit is passed. The returned stop function ends the
// watch and reports whether it called interrupt.
func (m *memoryWatch) start(interrupt func()) (stop func() bool) {
	cycles := m.cycles
	var finished atomic.Uint64 // without a cycles reading: the collections collect finished
	if cycles == nil {
		cycles = func() gcCycles { n := finished.Load(); return gcCycles{total: n, forced: n} }
	}
	base := m.heap()
	done := make(chan struct{})
	var wg sync.WaitGroup
	var hit bool
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(m.every)
		defer t.Stop()
		// last is the previous tick's reading; older the latest one
		// before the cycle count last changed. A cycle's marking began
		// after the cycle before it ended: a reading taken while the
		// count was two less or more precedes it.
		last := m.reading(cycles)
		var older reading
		haveOlder := false
		// The collection the watch last asked for: the reading before it,
		// whether no other forced cycle can have been under way then
		// (sure), and whether its cycle is yet to end (inFlight).
		var asked reading
		haveAsked, sure, inFlight := false, false, false
		var askedDone chan struct{}
		var since time.Time // waiting for a verdict needed since; zero when not
		// overOnce: the last verdict was over the limit. The next one
		// must say so too: what others allocate while one cycle marks
		// counts as live in it, but is garbage by the next.
		overOnce := false
		// After a verdict under the limit, the live heap has grown since
		// by at most what was allocated since: bound and boundFrom (the
		// allocation count before that cycle ended). No collection is
		// asked for while that stays under the limit.
		haveBound := false
		var bound, boundFrom uint64
		prev, prevAt := base, time.Now()
		prevAllocs := m.allocated()
		var lastHuge uint64 // the size of the last huge step (see doubling)
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			now := time.Now() // not the tick's time: a late tick must not count as patience
			h := m.heap()
			g := h - min(h, base)
			allocs := m.allocated()
			cur := reading{allocs: allocs.bytes, cycles: cycles()} // allocations first: see reading
			if cur.cycles.total > last.cycles.total {
				// A cycle ended since the last tick, the watch's or the
				// runtime's own: the verdict is what it marked live, read
				// at once, not after the sweep (runtime.GC sweeps the
				// whole heap before it returns), or the heap read now if
				// less. Both overstate the script's data: others'
				// allocations during the marking count as live, and
				// their garbage since is in the heap.
				v := min(m.liveGrown(base), g)
				// The allocations since a reading known to precede the
				// cycle's marking: the latest such reading of the ticks,
				// or the one before the watch asked for a collection,
				// when the cycle that ended is that one or later.
				from, known := uint64(0), false
				switch {
				case last.cycles.total+2 <= cur.cycles.total:
					from, known = last.allocs, true
				case haveOlder && older.cycles.total+2 <= cur.cycles.total:
					from, known = older.allocs, true
				}
				if haveAsked && asked.over(cur.cycles, sure) && (!known || asked.allocs > from) {
					from, known = asked.allocs, true
				}
				switch {
				case v <= m.limit:
					overOnce = false
					haveBound, bound, boundFrom = true, v, last.allocs
				// Less everything allocated since the cycle began (the
				// script's own allocations too), the verdict counts only
				// data that was there before and lived through it: the
				// limit is passed without asking again.
				case overOnce || m.allocs != nil && known && v-min(v, cur.allocs-min(cur.allocs, from)) > m.limit:
					hit = true
					interrupt()
					return
				default:
					overOnce = true
				}
			}
			// The asked-for cycle is over, or (unsure) another forced one
			// is: another may be asked for. runtime.GC waits for a cycle
			// under way and starts the next; it is not waited for while
			// it sweeps.
			if inFlight && (asked.over(cur.cycles, true) || isClosed(askedDone)) {
				inFlight = false
			}
			if cur.cycles.total > last.cycles.total {
				older, haveOlder = last, true
				since = time.Time{} // patience counts for each cycle waited on
			}
			last = cur
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
			// Where the data segment is the hard bound (a worker), it
			// keeps the address space of every huge step: a doubling
			// string's halves are garbage, but none can hold the next,
			// larger step, so the data grows by each step and reaches
			// twice the last. A doubling (a huge step of an eighth of
			// the limit or more, at least 7/4 of the one before it) whose
			// next step would take the data segment to within an eighth
			// of the limit is stopped now, with its line, rather than
			// killed by the server in the middle of that next step's
			// copy, which nothing can interrupt and which takes a second
			// on a busy machine. The eighth: the server counts resident
			// memory, which holds the garbage of the steps before (the
			// worker does not collect until near its soft limit) and the
			// runtime's own growth; measured, a 128 MiB step from a 64
			// MiB string took the worker's resident memory 256.9 MiB
			// past where it began, over the 256 MiB bound.
			hugeStep := m.allocs != nil && oneHuge && grew >= m.slack/4
			doubling := m.data != nil && hugeStep && grew >= m.limit/8 && lastHuge > 0 && grew >= lastHuge/4*7
			if hugeStep {
				lastHuge = grew
			}
			prev, prevAt, prevAllocs = h, now, allocs
			// A collection is needed while the last verdict was over the
			// limit, or the heap is past it and the live heap may be:
			// no verdict yet, or the last one plus what was allocated
			// since passes the limit.
			need := overOnce || g > m.limit && (!haveBound || m.allocs == nil || bound+cur.allocs-min(cur.allocs, boundFrom) > m.limit)
			switch {
			case !need:
				since = time.Time{}
			case since.IsZero():
				since = now
			}
			switch {
			case doubling && m.dataReaches(2*grew):
				hit = true
				interrupt()
				return
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
			case g > m.limit+m.slack && (jump || !since.IsZero() && now.Sub(since) > m.patience):
				hit = true
				interrupt()
				return
			case need && !inFlight:
				asked, sure, askedDone = m.collectAsync(cycles, &finished)
				haveAsked, inFlight = true, true
			}
		}
	}()
	return func() bool {
		close(done)
		wg.Wait()
		return hit
	}
}

// dataReaches reports whether the data segment, grown by n more bytes,
// would reach to within an eighth of the limit (false where there is no
// reading).
func (m *memoryWatch) dataReaches(n uint64) bool {
	if m.data == nil {
		return false
	}
	d, ok := m.data()
	return ok && d+n >= m.limit-m.limit/8
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

// gcCycles counts the collector's completed cycles.
type gcCycles struct {
	total  uint64 // of any cause
	forced uint64 // asked for by a runtime.GC call
}

// reading is one look at the process: the bytes allocated so far, read
// before the cycles completed, so that a cycle counted later began after
// the allocations counted.
type reading struct {
	allocs uint64
	cycles gcCycles
}

// over tells whether, by cycles c, a cycle that began after reading r has
// ended: the cycle after the one that may have been under way at r has,
// or a forced one has and (sure, as collectAsync says) no forced cycle of
// this package can have been under way at r.
func (r reading) over(c gcCycles, sure bool) bool {
	return c.total >= r.cycles.total+2 || sure && c.forced > r.cycles.forced
}

func (m *memoryWatch) reading(cycles func() gcCycles) reading {
	a := m.allocated().bytes
	return reading{allocs: a, cycles: cycles()}
}

// forcers counts the forced collections this package has under way:
// runtime.GC returns once its cycle is over and swept.
var forcers struct {
	sync.Mutex
	n int
}

// forceGC runs f, a forced collection, counted in forcers.
func forceGC(f func()) {
	forcers.Lock()
	forcers.n++
	forcers.Unlock()
	defer uncountForcer()
	f()
}

func uncountForcer() {
	forcers.Lock()
	forcers.n--
	forcers.Unlock()
}

// collectAsync asks for a collection beside the watch and returns the
// reading before it, and the channel closed when collect
// returns. sure says no other forced cycle of this package was under way
// at the reading: the next forced cycle to end is this one, or began
// after it (a runtime.GC call by other code, jsonq's for one, can still
// be under way: its cycle is then taken for this one). finished counts
// the collections done, for a watch with no cycles reading.
func (m *memoryWatch) collectAsync(cycles func() gcCycles, finished *atomic.Uint64) (before reading, sure bool, done chan struct{}) {
	done = make(chan struct{})
	forcers.Lock()
	sure = forcers.n == 0
	before = m.reading(cycles)
	forcers.n++
	forcers.Unlock()
	go func() {
		defer uncountForcer()
		m.collect()
		finished.Add(1)
		close(done)
	}()
	return before, sure, done
}

// isClosed tells whether c, nil or not, is closed.
func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// readCycles reads the process's completed collection cycles.
func readCycles() gcCycles {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	var c gcCycles
	if s[0].Value.Kind() == metrics.KindUint64 && s[1].Value.Kind() == metrics.KindUint64 {
		c.total, c.forced = s[0].Value.Uint64(), s[1].Value.Uint64()
	}
	return c
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
