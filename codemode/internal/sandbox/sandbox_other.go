//go:build !linux && !darwin

package sandbox

import (
	"runtime"
	"runtime/debug"
	"time"
)

// Prepare does nothing here.
func Prepare() {}

// Apply applies nothing: Windows has no rlimits, and no file or network
// sandbox is made for the worker. The server holds it in a job object
// (killed as a whole) and watches its working set.
func Apply() []Layer {
	return []Layer{{Name: "sandbox", Detail: "unavailable on " + runtime.GOOS + ": no file or network sandbox; the server's memory watch and the time limit hold"}}
}

// Data returns ErrNoData: the data segment is read on Linux only.
func Data() (int64, error) { return 0, ErrNoData }

// LimitRun sets the Go runtime's soft memory limit under bound.
func LimitRun(bound int64, inUse uint64, cpu time.Duration) string {
	if bound > 0 {
		debug.SetMemoryLimit(SoftLimit(bound, inUse))
	}
	return ""
}
