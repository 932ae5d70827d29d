//go:build unix

package codemode

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS is a reaped process's peak resident memory in bytes: getrusage's
// ru_maxrss, which Linux counts in KiB and macOS in bytes.
func peakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) << 10
}
