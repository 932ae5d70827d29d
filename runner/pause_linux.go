package runner

import (
	"syscall"
	"time"
	"unsafe"
)

// pause sleeps for d without leaving the Go scheduler (a raw system
// call): the goroutine keeps its thread and its P. Through the scheduler
// (time.Sleep, or a system call it watches), a pause of a few hundred
// microseconds handed the P to another thread and woke it again, which
// cost as much as the reads it saved (Command.Gather).
func pause(d time.Duration) {
	ts := syscall.NsecToTimespec(d.Nanoseconds())
	syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
}
