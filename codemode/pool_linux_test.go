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
// script runs: no_new_privs and a seccomp filter hold, a worker
// started as root runs as nobody, and (from /proc/PID/limits) it can open
// no new descriptor, dump no core and write no file. The layers the worker reports say that
// Landlock holds wherever the kernel has it (each layer is probed by the
// worker: /etc/passwd and a TCP connect refused).
func TestWorkerSandboxLinux(t *testing.T) {
	p := testPool(t, 1)
	status := Tool{Name: "status", Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
		pid := ctx.Value(workerPIDKey{}).(int)
		var out []byte
		for _, f := range []string{"status", "limits"} {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, f))
			if err != nil {
				return nil, err
			}
			out = append(out, b...)
		}
		return json.Marshal(string(out))
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
	// "Max open files  12  12  files": soft and hard, past the
	// descriptors the worker has open.
	limit := func(name string) []string {
		for _, l := range strings.Split(st, "\n") {
			if rest, ok := strings.CutPrefix(l, name+" "); ok {
				return strings.Fields(rest)
			}
		}
		return nil
	}
	if f := limit("Max open files"); len(f) < 2 || f[0] != f[1] || len(f[0]) > 2 {
		t.Errorf("Max open files: %q, want the same soft and hard limit, under 100", f)
	}
	for _, name := range []string{"Max core file size", "Max file size"} {
		if f := limit(name); len(f) < 2 || f[0] != "0" || f[1] != "0" {
			t.Errorf("%s: %q, want 0 0", name, f)
		}
	}
	layers := map[string]Layer{}
	for _, l := range p.Layers() {
		layers[l.Name] = l
	}
	if l := layers["seccomp"]; !l.Active {
		t.Errorf("seccomp: %+v", l)
	}
	if l := layers["rlimits"]; !l.Active || !strings.Contains(l.Detail, "RLIMIT_NOFILE") || !strings.Contains(l.Detail, "per run RLIMIT_DATA and RLIMIT_CPU") {
		t.Errorf("rlimits: %+v", l)
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
