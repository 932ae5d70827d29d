//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package procgroup

import (
	"time"

	"golang.org/x/sys/unix"
)

// waitExited returns once process pid has exited, without reaping it: a
// kqueue EVFILT_PROC NOTE_EXIT event fires at exit and leaves the zombie for
// cmd.Wait. (waitid with WNOWAIT, which Linux uses, is not offered here.)
func waitExited(pid int) {
	for {
		kq, err := unix.Kqueue()
		if err != nil {
			// Out of descriptors: try again shortly rather than report
			// an exit that has not happened.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		waitKqueue(kq, pid)
		unix.Close(kq)
		return
	}
}

func waitKqueue(kq, pid int) {
	change := make([]unix.Kevent_t, 1)
	unix.SetKevent(&change[0], pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	change[0].Fflags = unix.NOTE_EXIT
	out := make([]unix.Kevent_t, 1)
	for {
		n, err := unix.Kevent(kq, change, out, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			// ESRCH: the process has exited already (a zombie, which
			// kevent does not watch).
			return
		case n > 0:
			return
		}
		change = nil // registered: from now on only wait
	}
}
