package procmem

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

type sysReader struct {
	f, status *os.File
	page      int64
	buf       [128]byte
	sbuf      [4096]byte
}

func open(pid int) (sysReader, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return sysReader{}, err
	}
	status, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		f.Close()
		return sysReader{}, err
	}
	return sysReader{f: f, status: status, page: int64(os.Getpagesize())}, nil
}

// peak reads VmHWM from /proc/PID/status: the peak of the process's own
// memory (a child's ru_maxrss is no use here: it starts from the parent's
// peak when the child is started by vfork, as Go starts processes).
func (s *sysReader) peak() (int64, error) {
	n, err := s.status.ReadAt(s.sbuf[:], 0)
	if n == 0 {
		return 0, err
	}
	for _, line := range strings.Split(string(s.sbuf[:n]), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("procmem: no VmHWM (the process has exited)")
}

// resident reads statm's second field, the resident pages.
func (s *sysReader) resident() (int64, error) { return s.statm(1) }

// data reads statm's sixth field, the data pages.
func (s *sysReader) data() (int64, error) { return s.statm(5) }

// statm reads field i of /proc/PID/statm, in bytes.
func (s *sysReader) statm(i int) (int64, error) {
	n, err := s.f.ReadAt(s.buf[:], 0)
	if n == 0 {
		return 0, err
	}
	f := strings.Fields(string(s.buf[:n]))
	if len(f) <= i {
		return 0, fmt.Errorf("procmem: statm reads %q", s.buf[:n])
	}
	pages, err := strconv.ParseInt(f[i], 10, 64)
	if err != nil {
		return 0, err
	}
	return pages * s.page, nil
}

func (s *sysReader) close() error {
	s.status.Close()
	return s.f.Close()
}
