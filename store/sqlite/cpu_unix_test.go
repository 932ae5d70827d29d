//go:build unix

package sqlite_test

import "syscall"

// processCPU returns the CPU time the process has used, in nanoseconds:
// on a shared machine, steadier than the wall clock.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// minorFaults returns how many minor page faults the process has taken:
// a page of a memory-mapped file touched for the first time through a
// mapping costs one (or one per few pages, with the kernel's fault-around).
func minorFaults() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return int64(ru.Minflt)
}
