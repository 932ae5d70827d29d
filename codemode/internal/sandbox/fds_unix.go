//go:build unix

package sandbox

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeInherited closes the descriptors above standard error that the
// worker inherited without close-on-exec from whatever started its
// server (a shell's, a supervisor's): the worker needs none of them, and
// a script must not reach them. Those the Go runtime opened itself are
// close-on-exec, and stay.
func closeInherited(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.Close(fd)
		}
	}
}
