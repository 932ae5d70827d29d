package codemode

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeGC is a collector a test drives: cycles end when the test or the
// watch's collection says, each with what it marked live and what was
// allocated while it ran.
type fakeGC struct {
	mu            sync.Mutex
	total, forced uint64
	live, allocs  uint64 // bytes
}

// cycle ends a cycle that found live MiB live, with during MiB allocated
// while it ran. The allocations and the live bytes are in place before the
// count moves, as the runtime's mark termination does.
func (f *fakeGC) cycle(live, during uint64, forced bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.allocs += during << 20
	f.live = live << 20
	f.total++
	if forced {
		f.forced++
	}
}

func (f *fakeGC) read() (c gcCycles, live, allocs uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return gcCycles{total: f.total, forced: f.forced}, f.live, f.allocs
}

// The memory watch takes its verdict from every cycle that ends, the
// runtime's own too, as soon as its marking ends: a collection it asked
// for is not waited on while it sweeps. Every over-the-limit verdict is
// still confirmed by a second cycle unless the data was there before the
// cycle began.
func TestMemoryWatchCycles(t *testing.T) {
	tests := []struct {
		name string
		// heap: MiB past the base the heap reads, garbage or not; first:
		// what it reads until the runtime's own cycles have ended.
		heap, first uint64
		// natural: what the runtime's own cycles find live, in MiB, ended
		// one after another while the watch runs; a collection the watch
		// asks for meanwhile waits for them.
		natural []uint64
		// forced: what the watch's collections find live (the last
		// repeats); during: MiB allocated while any cycle runs.
		forced []uint64
		during uint64
		// sweep: a collection the watch asked for ends its cycle but does
		// not return (it sweeps) until the test ends; stall: it never
		// even ends its cycle.
		sweep, stall  bool
		othersForcing bool // another forced collection of the package is under way
		interrupt     bool
		marks         int64         // forced cycles ended before the verdict; -1: not checked
		patience      time.Duration // 0: an hour
	}{
		{"over at the mark's end, others allocated meanwhile: asked twice, sweeps not waited for", 110, 110, nil, []uint64{105}, 20, true, false, false, true, 2, 0},
		{"over before the collection began: asked once, its sweep not waited for", 110, 110, nil, []uint64{105}, 0, true, false, false, true, 1, 0},
		{"over before the collection began, another forced one under way: asked twice", 110, 110, nil, []uint64{105}, 0, false, false, true, true, 2, 0},
		{"the runtime's own cycles, over twice: stopped", 110, 110, []uint64{105, 106}, nil, 0, false, true, false, true, 0, 0},
		{"the runtime's own cycle over once, garbage by the next: not stopped", 110, 110, []uint64{105, 20}, nil, 20, false, true, false, false, 0, 0},
		{"the runtime's own cycle over, then the watch's: stopped", 110, 110, []uint64{105}, []uint64{105}, 20, false, false, false, true, 1, 0},
		{"under the limit by the runtime's own cycle: no collection asked for", 110, 90, []uint64{20}, []uint64{20}, 0, false, false, false, false, 0, 0},
		{"under the limit by the watch's collection: asked once", 110, 110, nil, []uint64{20}, 0, false, false, false, false, 1, 0},
		// Past the limit plus the slack, a collection held up longer than
		// patience is not waited for, when a verdict is needed.
		{"the runtime's own cycle finds garbage, the watch's collection stalled: not stopped past the slack", 200, 110, []uint64{20}, nil, 0, false, true, false, false, 0, time.Millisecond},
		{"the runtime's own cycle over once, the watch's collection stalled: stopped past the slack", 200, 110, []uint64{105}, nil, 20, false, true, false, true, 0, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			waitForcersDone(t)
			f := &fakeGC{}
			var reads, asked atomic.Int64
			var naturalDone atomic.Bool
			end, gate := make(chan struct{}), make(chan struct{})
			if tt.othersForcing {
				forcers.Lock()
				forcers.n++
				forcers.Unlock()
			}
			defer func() {
				close(end)
				if tt.othersForcing {
					uncountForcer()
				}
				waitForcersDone(t)
			}()
			patience := tt.patience
			if patience == 0 {
				patience = time.Hour
			}
			m := &memoryWatch{limit: 100 << 20, slack: 25 << 20, patience: patience, jumpWindow: time.Hour, every: time.Microsecond,
				heap: func() uint64 {
					if reads.Add(1) == 1 {
						return 0 // the base
					}
					if !naturalDone.Load() {
						return tt.first << 20
					}
					return tt.heap << 20
				},
				live: func() uint64 { _, l, _ := f.read(); return l },
				cycles: func() gcCycles {
					c, _, _ := f.read()
					return c
				},
				allocs: func() allocCounts {
					_, _, a := f.read()
					return allocCounts{bytes: a}
				},
				collect: func() {
					n := asked.Add(1)
					<-gate
					if tt.stall {
						<-end
						return
					}
					f.cycle(tt.forced[min(int(n), len(tt.forced))-1], tt.during, true)
					if tt.sweep {
						<-end
					}
				},
			}
			fired := make(chan struct{}, 1)
			stop := m.start(func() { fired <- struct{}{} })
			// wait lets the watch read the heap n more times, or fire.
			wait := func(n int64) {
				for until := reads.Load() + n; reads.Load() < until && len(fired) == 0; {
					time.Sleep(100 * time.Microsecond)
				}
			}
			for _, live := range tt.natural {
				wait(100)
				f.cycle(live, tt.during, false)
			}
			wait(10) // a verdict on the last
			naturalDone.Store(true)
			close(gate)
			// Far more readings when it should fire: a busy machine may
			// run the watch's collections late.
			if tt.interrupt {
				wait(1e7)
			} else {
				wait(2000)
			}
			hit := stop()
			if hit != tt.interrupt || (len(fired) == 1) != tt.interrupt {
				t.Errorf("interrupted %v (fired %d), want %v", hit, len(fired), tt.interrupt)
			}
			if c, _, _ := f.read(); tt.marks >= 0 && int64(c.forced) != tt.marks {
				t.Errorf("%d forced cycles ended, want %d", c.forced, tt.marks)
			}
		})
	}
}

// After a verdict under the limit, the heap may read over it for its
// garbage: no collection is asked for again until the live heap, that
// verdict plus all allocated since, could pass the limit.
func TestMemoryWatchAsksAgainOnlyWhenItCouldPass(t *testing.T) {
	waitForcersDone(t)
	f := &fakeGC{}
	var reads atomic.Int64
	m := &memoryWatch{limit: 100 << 20, slack: 25 << 20, patience: time.Hour, jumpWindow: time.Hour, every: time.Microsecond,
		heap: func() uint64 {
			if reads.Add(1) == 1 {
				return 0
			}
			return 110 << 20 // garbage, never swept
		},
		live:    func() uint64 { _, l, _ := f.read(); return l },
		cycles:  func() gcCycles { c, _, _ := f.read(); return c },
		allocs:  func() allocCounts { _, _, a := f.read(); return allocCounts{bytes: a} },
		collect: func() { f.cycle(60, 0, true) },
	}
	stop := m.start(func() { t.Error("interrupted") })
	defer waitForcersDone(t)
	defer stop()
	wait := func(n int64) {
		for until := reads.Load() + n; reads.Load() < until; {
			time.Sleep(100 * time.Microsecond)
		}
	}
	wait(2000)
	if c, _, _ := f.read(); c.forced != 1 {
		t.Fatalf("%d collections with nothing allocated since the first, want 1", c.forced)
	}
	// 30 MiB more could not pass it (60 + 30), 50 could.
	f.cycle(60, 30, false)
	wait(2000)
	if c, _, _ := f.read(); c.forced != 1 {
		t.Fatalf("%d collections with 30 MiB allocated since a verdict of 60, want 1", c.forced)
	}
	f.mu.Lock()
	f.allocs += 50 << 20
	f.mu.Unlock()
	for c, _, _ := f.read(); c.forced < 2; c, _, _ = f.read() {
		time.Sleep(100 * time.Microsecond)
	}
}

// waitForcersDone waits for the collections a test's watches asked for to
// return: one under way makes the next test's watch unsure of its own.
func waitForcersDone(t *testing.T) {
	t.Helper()
	for {
		forcers.Lock()
		n := forcers.n
		forcers.Unlock()
		if n == 0 {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}
