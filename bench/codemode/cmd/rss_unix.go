//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS is the child's peak resident set size in bytes: getrusage's
// ru_maxrss, which Linux counts in KiB and macOS in bytes.
func peakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}
