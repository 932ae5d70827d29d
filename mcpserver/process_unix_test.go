//go:build unix

package mcpserver

import "syscall"

// processRunning reports whether process pid exists (a zombie counts).
func processRunning(pid int) bool { return syscall.Kill(pid, 0) == nil }

// killProcess ends process pid, best effort.
func killProcess(pid int) { syscall.Kill(pid, syscall.SIGKILL) }
