package codemode

import (
	"runtime/debug"
	"sync"
)

// softLimit lowers the Go runtime's soft memory limit (debug.SetMemoryLimit)
// while runs with a memory bound are going, to the memory in use when the
// latest run started plus the bounds of all runs going plus headroom. Near
// that limit the collector runs early and often, and the runtime gives
// freed pages back to the operating system before it maps new ones: a
// script's garbage (the halves a doubling string left behind) is returned
// before its next huge allocation adds to the process's resident memory,
// and the watch's collections find a heap with less garbage to sweep.
//
// The limit is soft: the runtime never fails an allocation for it, and
// caps the collector's share of the CPU at about half when the limit
// cannot be met; stopping the script stays the memory watch's job. The
// limit is never raised above the one in force before (GOMEMLIMIT, or
// what the program set), and that one is put back when the last run ends.
// A program that changes the limit while runs are going has its change
// overwritten when the last run ends.
var softLimit struct {
	sync.Mutex
	runs   int   // runs going
	bounds int64 // the sum of their bounds
	prev   int64 // the limit before the first of them
}

// softLimitHeadroom is what the limit leaves above the bounds: the
// runtime's own overhead, and the allocation in flight when a script is
// stopped.
const softLimitHeadroom = maxSlack

// lowerSoftLimit sets the soft memory limit for a run with the given bound
// and returns the function that ends it.
func lowerSoftLimit(bound int64) (release func()) {
	softLimit.Lock()
	defer softLimit.Unlock()
	if softLimit.runs == 0 {
		softLimit.prev = debug.SetMemoryLimit(-1)
	}
	softLimit.runs++
	softLimit.bounds += bound
	// The memory in use now counts the other runs' data too: the limit is
	// looser than it could be while runs overlap, never tighter.
	setSoftLimit(int64(inUse()) + softLimit.bounds + softLimitHeadroom)
	var once sync.Once
	return func() {
		once.Do(func() {
			softLimit.Lock()
			defer softLimit.Unlock()
			softLimit.runs--
			softLimit.bounds -= bound
			if softLimit.runs == 0 {
				debug.SetMemoryLimit(softLimit.prev)
			}
		})
	}
}

// setSoftLimit sets limit, or the limit in force before the runs when that
// is lower. Called with softLimit held.
func setSoftLimit(limit int64) {
	if limit <= 0 || limit > softLimit.prev {
		limit = softLimit.prev
	}
	debug.SetMemoryLimit(limit)
}

// inUse reads the memory the Go runtime holds from the operating system
// and has not given back: what its memory limit counts.
func inUse() uint64 {
	total, released := readMetric("/memory/classes/total:bytes"), readMetric("/memory/classes/heap/released:bytes")
	return total - min(total, released)
}
