package procmem

import (
	"encoding/binary"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// proc_info's call and flavour for proc_pid_rusage(pid, RUSAGE_INFO_V0):
// libproc's proc_pid_rusage is __proc_info(PROC_INFO_CALL_PIDRUSAGE, pid,
// flavor, 0, buffer, 0).
const (
	procInfoCallPIDRusage = 9
	rusageInfoV0          = 0
	// ri_resident_size in struct rusage_info_v0: after ri_uuid[16] and six
	// uint64 fields.
	residentOffset = 16 + 6*8
)

type sysReader struct {
	pid int
	buf [96]byte // sizeof(struct rusage_info_v0)
}

func open(pid int) (sysReader, error) { return sysReader{pid: pid}, nil }

func (s *sysReader) resident() (int64, error) {
	_, _, errno := syscall.Syscall6(unix.SYS_PROC_INFO, procInfoCallPIDRusage, uintptr(s.pid), rusageInfoV0, 0, uintptr(unsafe.Pointer(&s.buf[0])), 0)
	if errno != 0 {
		return 0, errno
	}
	return int64(binary.LittleEndian.Uint64(s.buf[residentOffset:])), nil
}

func (s *sysReader) close() error { return nil }

func (s *sysReader) peak() (int64, error) { return 0, ErrUnsupported }

func (s *sysReader) data() (int64, error) { return 0, ErrUnsupported }
