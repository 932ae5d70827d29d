package procgroup

import "golang.org/x/sys/unix"

// waitExited returns once process pid has exited, without reaping it
// (waitid with WNOWAIT).
func waitExited(pid int) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}
