// Package procmem reads another process's resident memory, quickly enough
// to be read every few milliseconds: the Code Mode server's watch of its
// workers. Linux reads /proc/PID/statm through a descriptor kept open;
// macOS asks the kernel's proc_info (proc_pid_rusage's system call);
// Windows reads the process's memory counters.
package procmem

import "errors"

// ErrUnsupported: this platform gives no reading.
var ErrUnsupported = errors.New("procmem: not supported on this platform")

// Reader reads one process's memory. It is not safe for concurrent use.
type Reader struct{ sys sysReader }

// Open returns a Reader of process pid.
func Open(pid int) (*Reader, error) {
	s, err := open(pid)
	if err != nil {
		return nil, err
	}
	return &Reader{sys: s}, nil
}

// Resident returns the process's resident memory in bytes.
func (r *Reader) Resident() (int64, error) { return r.sys.resident() }

// Data returns the process's data segment in bytes (VmData: private
// writable memory, what RLIMIT_DATA counts) where the platform tells it
// (Linux); else ErrUnsupported.
func (r *Reader) Data() (int64, error) { return r.sys.data() }

// Peak returns the process's peak resident memory so far, in bytes, where
// the platform tells it while the process runs (Linux: VmHWM); else
// ErrUnsupported.
func (r *Reader) Peak() (int64, error) { return r.sys.peak() }

// Close releases what the Reader holds.
func (r *Reader) Close() error { return r.sys.close() }
