package capture

import "syscall"

// adviseHuge asks the kernel to back b with huge pages where it can, so
// that filling the copy cap's buffer takes a few page faults, not one per
// 4 KiB page. Only advice: an error changes nothing.
func adviseHuge(b []byte) {
	const huge = 2 << 20
	if len(b) < 2*huge {
		return
	}
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
}
