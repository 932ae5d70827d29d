package procmem

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

type sysReader struct {
	f    *os.File
	page int64
	buf  [128]byte
}

func open(pid int) (sysReader, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return sysReader{}, err
	}
	return sysReader{f: f, page: int64(os.Getpagesize())}, nil
}

// resident reads statm's second field, the resident pages.
func (s *sysReader) resident() (int64, error) {
	n, err := s.f.ReadAt(s.buf[:], 0)
	if n == 0 {
		return 0, err
	}
	f := strings.Fields(string(s.buf[:n]))
	if len(f) < 2 {
		return 0, fmt.Errorf("procmem: statm reads %q", s.buf[:n])
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, err
	}
	return pages * s.page, nil
}

func (s *sysReader) close() error { return s.f.Close() }
