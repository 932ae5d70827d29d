// Package sandbox drops, in a Code Mode worker process, what a script's
// worker does not need, and sets the operating system's limits for one run.
// The worker calls Prepare at its start, Apply once it is warm (before it
// says it is ready), and LimitRun when it receives its script.
//
// What holds depends on the platform (docs/codemode.md lists it):
//
//   - Linux: no_new_privs; Landlock with every file access right and TCP
//     bind/connect refused, and IPC scoped (best effort: whatever ABI the
//     kernel has); a seccomp filter that refuses the system calls that
//     reach files, the network, other processes and the kernel's
//     administration (a deny list: the Go runtime keeps what it needs);
//     root given up for nobody (65534) when the worker runs as root;
//     RLIMIT_NOFILE (no new descriptors), RLIMIT_CORE and RLIMIT_FSIZE 0;
//     per run, RLIMIT_DATA a little past the memory bound (HardGrowth)
//     and RLIMIT_CPU past the timeout.
//   - macOS: the same rlimits (RLIMIT_DATA is not enforced there);
//     sandbox_init is not called (see Apply).
//   - Windows: nothing in the worker; the server holds it in a job object
//     (procgroup: killed as a whole) and watches its working set; no
//     job memory limit is set.
//
// Each layer is probed after it is applied: a worker opens /etc/passwd and a
// TCP socket to see them refused, and reports what it saw.
package sandbox

import (
	"errors"
	"strings"
)

// ErrNoData: this platform gives no reading of the data segment (Data).
var ErrNoData = errors.New("sandbox: no data segment reading on this platform")

// Layer is one protection of a worker and whether it holds.
type Layer struct {
	Name   string `json:"name"`
	Active bool   `json:"active"`
	// Detail says what holds, or why it does not.
	Detail string `json:"detail"`
}

// Summary joins layers as "name: detail; ...", the inactive ones only
// when inactive is true.
func Summary(layers []Layer, inactive bool) string {
	var parts []string
	for _, l := range layers {
		if inactive && l.Active {
			continue
		}
		parts = append(parts, l.Name+": "+l.Detail)
	}
	return strings.Join(parts, "; ")
}

// softMargin is how far under the bound the Go runtime's soft limit
// keeps the worker's memory: the server kills the worker once its
// resident memory has grown past the bound, so the collector must return
// a script's garbage a little before that, the runtime's own growth
// (spans, stacks) being counted in resident memory too.
const softMargin = 16 << 20

// SoftLimit is the Go runtime's soft memory limit for a run with the given
// bound, the runtime holding inUse bytes when it starts: the bound less
// softMargin above it.
func SoftLimit(bound int64, inUse uint64) int64 {
	return int64(inUse) + bound - softMargin
}

// HardGrowth is how far a worker may grow its data segment before the
// operating system refuses it memory: the bound plus 40 MiB. The data
// segment counts address space the heap keeps and the script no longer
// uses (a doubling string's halves, an array's old backing store, pages
// given back to the system), so it runs ahead of resident memory; the
// 40 MiB leave the stop of a script growing small objects to the server's
// watch of resident memory (which kills at once) rather than to an
// allocation refused in the middle of a collection, and let a doubling
// string's last step that fits be stopped by the worker's own watch, with
// its line.
func HardGrowth(bound int64) int64 { return bound + 40<<20 }

// mib formats bytes as MiB.
func mib(n int64) int64 { return n >> 20 }
