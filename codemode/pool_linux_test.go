package codemode

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// TestWorkerSandboxLinux reads a worker's /proc/PID/status while its
// script runs: no_new_privs and a seccomp filter hold, and a worker
// started as root runs as nobody. The layers the worker reports say that
// Landlock holds wherever the kernel has it (each layer is probed by the
// worker: /etc/passwd and a TCP connect refused).
func TestWorkerSandboxLinux(t *testing.T) {
	p := testPool(t, 1)
	status := Tool{Name: "status", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", ctx.Value(workerPIDKey{}).(int)))
		if err != nil {
			return nil, err
		}
		return json.Marshal(string(b))
	}}
	res := p.Run(context.Background(), "return tools.status({})", []Tool{status}, Options{})
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	st := string(res.Value) // a string result is shown as itself
	field := func(name string) string {
		for _, l := range strings.Split(st, "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && k == name {
				return strings.Join(strings.Fields(v), " ")
			}
		}
		return ""
	}
	if got := field("NoNewPrivs"); got != "1" {
		t.Errorf("NoNewPrivs: %q, want 1", got)
	}
	if got := field("Seccomp"); got != "2" {
		t.Errorf("Seccomp: %q, want 2 (filter)", got)
	}
	if os.Geteuid() == 0 && !strings.HasPrefix(field("Uid"), "65534 65534") {
		t.Errorf("a worker started as root has Uid %q, want nobody", field("Uid"))
	}
	layers := map[string]Layer{}
	for _, l := range p.Layers() {
		layers[l.Name] = l
	}
	if l := layers["seccomp"]; !l.Active {
		t.Errorf("seccomp: %+v", l)
	}
	if abi, err := ll.LandlockGetABIVersion(); err == nil && abi >= 1 {
		if l := layers["landlock"]; !l.Active || !strings.Contains(l.Detail, "files") {
			t.Errorf("the kernel has Landlock ABI %d, but the worker says %+v", abi, l)
		}
		if l := layers["landlock"]; abi >= 4 && !strings.Contains(l.Detail, "TCP connect refused") {
			t.Errorf("Landlock ABI %d refuses TCP connect, but the worker says %+v", abi, l)
		}
	} else {
		t.Logf("no Landlock on this kernel: %+v", layers["landlock"])
	}
}
