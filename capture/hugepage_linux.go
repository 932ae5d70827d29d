package capture

import (
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on the platforms Go
// runs Linux on with them (x86-64, arm64 with 4 KiB pages).
const hugePage = 2 << 20

// hugeBuffer returns an empty buffer of capacity n that starts on a huge
// page boundary and is advised to be backed by huge pages (MADV_HUGEPAGE),
// so that filling the copy cap's buffer takes a few page faults, not one
// per 4 KiB page. Aligned, every 2 MiB of it can be a huge page; the
// buffer Go's allocator returns starts anywhere, and the part of it before
// the first boundary and after the last (up to 2 MiB of the 8) took 4 KiB
// pages, a fault each. It asks for one huge page more than n, which the
// capture never writes (in a fresh process Go's allocator does not touch
// it either: new memory comes zeroed). The advice is only advice: an
// error changes nothing.
func hugeBuffer(n int) []byte {
	if n < 2*hugePage {
		return make([]byte, 0, n)
	}
	raw := make([]byte, n+hugePage)
	off := (hugePage - int(uintptr(unsafe.Pointer(unsafe.SliceData(raw)))%hugePage)) % hugePage
	b := raw[off : off+n : off+n]
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
	return b[:0]
}
