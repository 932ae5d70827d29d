package procgroup

import (
	"os"

	"golang.org/x/sys/unix"
)

func tunePipe(f *os.File, size int) {
	unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, size) // best effort
}
