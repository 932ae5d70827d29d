//go:build unix

package mcpserver

import (
	"syscall"
	"time"
)

// processRunning reports whether process pid exists (a zombie counts).
func processRunning(pid int) bool { return syscall.Kill(pid, 0) == nil }

// killProcess ends process pid, best effort.
func killProcess(pid int) { syscall.Kill(pid, syscall.SIGKILL) }

// processCPU is the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
