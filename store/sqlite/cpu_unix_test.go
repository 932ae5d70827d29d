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
