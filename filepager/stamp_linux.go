package filepager

import (
	"os"
	"syscall"
)

// statStamp is what fileStamp adds to the modification time on Linux:
// the change time, the inode and the device.
func statStamp(fi os.FileInfo) []uint64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	return []uint64{uint64(st.Ctim.Sec), uint64(st.Ctim.Nsec), uint64(st.Ino), uint64(st.Dev)}
}
