//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sqlite

import "syscall"

// diskFree returns the bytes free for an unprivileged user on the file
// system holding dir.
func diskFree(dir string) (int64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true //nolint:unconvert // the fields' types differ by platform
}
