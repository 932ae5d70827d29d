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
//     per run, RLIMIT_DATA at the memory bound and RLIMIT_CPU past the
//     timeout.
//   - macOS: the same rlimits (RLIMIT_DATA is not enforced there);
//     sandbox_init is not called (see Apply).
//   - Windows: nothing in the worker; the server holds it in a job object
//     (procgroup: killed as a whole) and watches its working set; no
//     job memory limit is set.
//
// Each layer is probed after it is applied: a worker opens /etc/passwd and a
// TCP socket to see them refused, and reports what it saw.
package sandbox

import "strings"

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

// Headroom is what a worker's resident memory may hold beyond a run's
// memory bound: the worker's own (its runtime, the code it runs: about 20
// MiB) and the script's allocation in flight when it is stopped. The
// server kills a worker whose resident memory passes bound + Headroom.
const Headroom = 64 << 20

// WatchSlack is how far past bound + Headroom the server lets a worker's
// resident memory go before it kills it: where the operating system holds
// the data segment (RLIMIT_DATA, Linux), the server's watch is a backstop
// and must not take the place of the worker's own stop, which gives the
// script's line; elsewhere the watch is the hard bound.
const WatchSlack = watchSlack

// HardGrowth is how far a worker may grow its data segment before the
// operating system refuses it memory: the bound, plus 16 MiB so that a
// string doubling to half the bound (its last step, 1 + 2 + ... + 128 MiB
// of address space never reused) still fits and the memory watch in the
// worker stops it with its line. Data counts garbage too: the Go runtime's
// soft limit, set at the bound, has the collector return it first.
func HardGrowth(bound int64) int64 { return bound + 16<<20 }

// mib formats bytes as MiB.
func mib(n int64) int64 { return n >> 20 }
