//go:build unix

package filepager

import (
	"os"
	"syscall"
)

// openFile opens name for reading without blocking: a named pipe put in
// place of the file after its checks would otherwise block the open until
// a writer came. The caller checks the type of what it got (f.Stat) and
// calls blocking on a regular file before reading.
func openFile(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// blocking clears the O_NONBLOCK that openFile set.
func blocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}
