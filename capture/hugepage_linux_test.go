package capture

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"unsafe"
)

// With HugePages the copy cap's buffer is advised to take huge pages (its
// mapping carries the kernel's "hg" flag); without it, it is not: a
// long-running process must not have its heap's mappings split.
//
// The advice outlives the buffer: once freed, Go's heap reuses the range
// with the flag still on it, so the case without HugePages runs first, in
// a fresh process of its own (this test binary, asked for that case only).
func TestHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skipf("this kernel has no transparent huge pages to advise: %v", err)
	}
	if os.Getenv(hugePagesCaseEnv) == "off" {
		checkHugePages(t, false)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHugePages$", "-test.count=1")
	cmd.Env = append(os.Environ(), hugePagesCaseEnv+"=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("without HugePages, in a fresh process: %v\n%s", err, out)
	}
	checkHugePages(t, true)
}

// hugePagesCaseEnv, set to "off", makes TestHugePages check only the case
// without HugePages.
const hugePagesCaseEnv = "SCROLLBACK_TEST_HUGEPAGES"

func checkHugePages(t *testing.T, huge bool) {
	t.Helper()
	c := New(Limits{HugePages: huge})
	c.Stdout().Write(bytes.Repeat([]byte("x\n"), 2<<20)) // past 1 MiB: the buffer grows to the copy cap
	if cap(c.buf) != DefaultCopy {
		t.Fatalf("buffer of %d bytes, want the copy cap", cap(c.buf))
	}
	start := uintptr(unsafe.Pointer(unsafe.SliceData(c.buf)))
	if huge {
		// Aligned, all four huge pages of the 8 MiB can be used; from
		// anywhere else, three at most, and up to 2 MiB of it takes
		// a page fault per 4 KiB. (Without HugePages it may start
		// anywhere, aligned too by chance.)
		if start%hugePage != 0 {
			t.Errorf("HugePages: the buffer starts at %#x, not on a huge page boundary", start)
		}
		if !bytes.Equal(c.buf, bytes.Repeat([]byte("x\n"), 2<<20)) {
			t.Errorf("HugePages: the buffer does not hold what was written")
		}
	}
	flags, err := vmFlags(start + DefaultCopy/2)
	if err != nil {
		t.Skipf("cannot read /proc/self/smaps: %v", err)
	}
	if got := strings.Contains(" "+flags+" ", " hg "); got != huge {
		t.Errorf("HugePages %v: the buffer's mapping has flags %q", huge, flags)
	}
	// Past the cap, the ring lives in the same buffer: the copy is
	// the head, the marker and the last bytes written, within the cap.
	tail := bytes.Repeat([]byte("the end\n"), 1<<20)
	c.Stdout().Write(tail)
	r := c.Result()
	if r.Complete || r.Gap == nil || len(r.Copy) > DefaultCopy ||
		!bytes.HasPrefix(r.Copy, []byte("x\nx\n")) || !bytes.HasSuffix(r.Copy, tail[len(tail)-int(c.Limits().Tail):]) {
		t.Errorf("HugePages %v: past the cap, the copy is %d bytes (complete %v, gap %+v), head %q, end %q",
			huge, len(r.Copy), r.Complete, r.Gap, r.Copy[:min(8, len(r.Copy))], r.Copy[max(0, len(r.Copy)-16):])
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
