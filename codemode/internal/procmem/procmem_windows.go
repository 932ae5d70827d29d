package procmem

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// processMemoryCounters is PROCESS_MEMORY_COUNTERS.
type processMemoryCounters struct {
	cb                         uint32
	PageFaultCount             uint32
	PeakWorkingSetSize         uintptr
	WorkingSetSize             uintptr
	QuotaPeakPagedPoolUsage    uintptr
	QuotaPagedPoolUsage        uintptr
	QuotaPeakNonPagedPoolUsage uintptr
	QuotaNonPagedPoolUsage     uintptr
	PagefileUsage              uintptr
	PeakPagefileUsage          uintptr
}

var procGetProcessMemoryInfo = windows.NewLazySystemDLL("kernel32.dll").NewProc("K32GetProcessMemoryInfo")

type sysReader struct{ h windows.Handle }

func open(pid int) (sysReader, error) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return sysReader{}, err
	}
	return sysReader{h: h}, nil
}

// resident returns the working set.
func (s *sysReader) resident() (int64, error) {
	var c processMemoryCounters
	c.cb = uint32(unsafe.Sizeof(c))
	r, _, err := procGetProcessMemoryInfo.Call(uintptr(s.h), uintptr(unsafe.Pointer(&c)), uintptr(c.cb))
	if r == 0 {
		return 0, err
	}
	return int64(c.WorkingSetSize), nil
}

func (s *sysReader) close() error { return windows.CloseHandle(s.h) }

func (s *sysReader) peak() (int64, error) { return 0, ErrUnsupported }

func (s *sysReader) data() (int64, error) { return 0, ErrUnsupported }
