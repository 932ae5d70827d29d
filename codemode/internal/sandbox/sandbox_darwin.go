package sandbox

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Prepare closes the descriptors the worker inherited by mistake.
func Prepare() { closeInherited("/dev/fd") }

// Apply sets the rlimits this platform honours. macOS's sandbox_init, the
// deny-all profile the issue asks for, is a C library call (libsandbox)
// that a binary built without cgo, as scrollback is released, cannot make
// without a hand-made dynamic-import trampoline; it is not applied, and
// the worker says so.
func Apply() []Layer {
	rl := rlimits("/dev/fd", "RLIMIT_CPU")
	os := Layer{Name: "sandbox", Detail: "unavailable on " + runtime.GOOS + ": no file or network sandbox without cgo (macOS sandbox_init is a C library call); the server's memory watch, the soft memory limit and the time limit hold"}
	return []Layer{rl, os}
}

// Data returns ErrNoData: the data segment is read on Linux only.
func Data() (int64, error) { return 0, ErrNoData }

// LimitRun sets the Go runtime's soft memory limit under bound (the
// operating system does not enforce RLIMIT_DATA here: the server's watch
// of the worker's resident memory is the hard bound) and RLIMIT_CPU past
// cpu.
func LimitRun(bound int64, inUse uint64, cpu time.Duration) string {
	var set []string
	if bound > 0 {
		debug.SetMemoryLimit(SoftLimit(bound, inUse))
	}
	if cpu > 0 {
		var ru unix.Rusage
		unix.Getrusage(unix.RUSAGE_SELF, &ru)
		used := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		cpu = min(cpu, math.MaxInt64-used) // a timeout near the largest accepted must not wrap around
		secs := uint64((used+cpu)/time.Second) + 1
		if err := unix.Setrlimit(unix.RLIMIT_CPU, &unix.Rlimit{Cur: secs, Max: secs + 1}); err == nil {
			set = append(set, fmt.Sprintf("RLIMIT_CPU %d s", secs))
		}
	}
	return strings.Join(set, ", ")
}
