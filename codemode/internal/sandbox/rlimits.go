//go:build linux || darwin

package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// rlimits stops new descriptors (the worker has all it needs open, as
// listed in fdDir), core dumps and file writes; perRun names the limits
// LimitRun adds for each script. RLIMIT_NPROC is not set: it counts every
// process and thread of the user, in every process, and the Go runtime
// must be able to start threads.
func rlimits(fdDir, perRun string) Layer {
	maxFD := 2
	if ents, err := os.ReadDir(fdDir); err == nil {
		for _, e := range ents {
			if n, err := strconv.Atoi(e.Name()); err == nil && n > maxFD {
				maxFD = n
			}
		}
	}
	var failed []string
	for _, l := range []struct {
		name     string
		resource int
		value    uint64
	}{
		{"RLIMIT_NOFILE", unix.RLIMIT_NOFILE, uint64(maxFD + 1)},
		{"RLIMIT_CORE", unix.RLIMIT_CORE, 0},
		{"RLIMIT_FSIZE", unix.RLIMIT_FSIZE, 0},
	} {
		if err := unix.Setrlimit(l.resource, &unix.Rlimit{Cur: l.value, Max: l.value}); err != nil {
			failed = append(failed, l.name+": "+err.Error())
		}
	}
	if len(failed) > 0 {
		return Layer{Name: "rlimits", Detail: strings.Join(failed, ", ")}
	}
	return Layer{Name: "rlimits", Active: true, Detail: fmt.Sprintf("RLIMIT_NOFILE %d, RLIMIT_CORE 0, RLIMIT_FSIZE 0; per run %s", maxFD+1, perRun)}
}
