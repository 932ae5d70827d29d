package procmem

import (
	"os"
	"runtime"
	"testing"
)

// TestResidentGrows reads this process's resident memory, then touches
// 64 MiB and reads it again: the reading must see it.
func TestResidentGrows(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		t.Skip("no reading on " + runtime.GOOS)
	}
	r, err := Open(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	before, err := r.Resident()
	if err != nil || before <= 0 {
		t.Fatalf("Resident() = %d, %v", before, err)
	}
	b := make([]byte, 64<<20)
	for i := range b {
		if i%4096 == 0 {
			b[i] = 1
		}
	}
	after, err := r.Resident()
	if err != nil {
		t.Fatal(err)
	}
	if after-before < 60<<20 {
		t.Errorf("resident %d MiB → %d MiB after touching 64 MiB", before>>20, after>>20)
	}
	if peak, err := r.Peak(); err == nil && peak < after {
		t.Errorf("peak %d MiB under the resident %d MiB", peak>>20, after>>20)
	} else if err != nil && runtime.GOOS == "linux" {
		t.Errorf("Peak: %v", err)
	}
	runtime.KeepAlive(b)
}
