package capture

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// With HugePages the copy cap's buffer is advised to take huge pages (its
// mapping carries the kernel's "hg" flag); without it, it is not: a
// long-running process must not have its heap's mappings split.
func TestHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skipf("this kernel has no transparent huge pages to advise: %v", err)
	}
	for _, huge := range []bool{true, false} {
		c := New(Limits{HugePages: huge})
		c.Stdout().Write(bytes.Repeat([]byte("x\n"), 2<<20)) // past 1 MiB: the buffer grows to the copy cap
		if cap(c.buf) != DefaultCopy {
			t.Fatalf("buffer of %d bytes, want the copy cap", cap(c.buf))
		}
		flags, err := vmFlags(uintptr(unsafe.Pointer(unsafe.SliceData(c.buf))) + DefaultCopy/2)
		if err != nil {
			t.Skipf("cannot read /proc/self/smaps: %v", err)
		}
		if got := strings.Contains(" "+flags+" ", " hg "); got != huge {
			t.Errorf("HugePages %v: the buffer's mapping has flags %q", huge, flags)
		}
	}
}

// vmFlags returns the VmFlags of the mapping of this process holding addr.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 && strings.Contains(line, " ") && !strings.HasSuffix(strings.Fields(line)[0], ":") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping holds %#x", addr)
}
