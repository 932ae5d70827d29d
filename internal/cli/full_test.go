package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// cliRun runs scrollback with args as a process would (the store opened
// and closed by the one command), with env as its whole environment, and
// returns its exit code and output.
func cliRun(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(context.Background(), args, IO{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut,
		Getenv: func(k string) string { return env[k] }})
	return code, out.String(), errOut.String()
}

// TestRunDiskFull is the laptop with a full disk, through
// `scrollback run`: on a 3 MiB file system, the copy of a 27 MB output
// cannot be saved, and the result says so (recovery "unavailable", the
// reason); the copy saved before still reads; and `seq 1 20000` run next
// is retained, every time (it failed one time in two: the failed copy's
// chunks, appended while its command ran, stayed in SQLite's log). The
// output comes fast (a file) or slowly (a command writing for a while, so
// that it is saved while it runs), several times each. stats then shows
// the failure and the free space.
func TestRunDiskFull(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts a file system")
	}
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skipf("needs root on Linux to mount a small tmpfs to fill (%s, uid %d); skipping the full-disk test", runtime.GOOS, os.Geteuid())
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a 3 MiB tmpfs to fill (%v: %s); skipping the full-disk test", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	// 27 MB of random hex digits (they compress to half: no copy of them
	// fits), in a file on the ordinary disk.
	raw := make([]byte, 13_300_000)
	rand.NewChaCha8([32]byte{7}).Read(raw)
	big := filepath.Join(t.TempDir(), "big.txt")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	enc := bytes.NewBuffer(nil)
	for i := 0; i < len(raw); i += 57 {
		line := raw[i:min(len(raw), i+57)]
		fmt.Fprintf(enc, "%x\n", line)
		if enc.Len() > 1<<20 {
			f.Write(enc.Bytes())
			enc.Reset()
		}
	}
	f.Write(enc.Bytes())
	f.Close()
	sources := map[bool]string{
		false: "cat " + big,
		// About 27 MB over a few hundred ms: saved while it runs.
		true: fmt.Sprintf("i=0; while [ $i -lt 9 ]; do head -c 3000000 %s; sleep 0.03; i=$((i+1)); done", big),
	}
	for i := range 6 {
		slow := i%2 == 1
		env := map[string]string{"SCROLLBACK_DB": filepath.Join(dir, fmt.Sprintf("db%d.sqlite", i)), "HOME": t.TempDir()}
		code, out, _ := cliRun(t, env, "run", "--json", "--", "seq 1 20000")
		before := runResult(t, code, out)
		if before.Recovery != "available" {
			t.Fatalf("%d: the first seq 1 20000: %+v", i, before)
		}
		code, out, errOut := cliRun(t, env, "run", "--json", "--", sources[slow])
		failed := runResult(t, code, out)
		if failed.Recovery != "unavailable" || !strings.Contains(failed.RecoveryError, "database or disk is full") ||
			!strings.Contains(failed.RecoveryError, "free disk space") || failed.OutputID != "" {
			t.Errorf("%d (slow %v): the 27 MB output: %+v (stderr %q); want recovery unavailable, saying the disk is full and what to do", i, slow, failed, errOut)
		}
		if code, out, errOut := cliRun(t, env, "read", "--limit", "20", before.OutputID); code != 0 || !strings.HasPrefix(out, "1\n2\n3\n") {
			t.Errorf("%d: the copy saved before: exit %d, %q, %q", i, code, out, errOut)
		}
		code, out, errOut = cliRun(t, env, "run", "--json", "--", "seq 1 20000")
		after := runResult(t, code, out)
		if after.Recovery != "available" || after.OutputID == "" {
			t.Errorf("%d (slow %v): seq 1 20000 after the failed save: %+v (stderr %q); want it retained", i, slow, after, errOut)
		}
		// `scrollback run` leaves its log (sqlite.Options.LeaveLog), but
		// nothing of the failed save: only the last save's few pages.
		if fi, err := os.Stat(env["SCROLLBACK_DB"] + "-wal"); err == nil && fi.Size() > 256<<10 {
			t.Errorf("%d: the write-ahead log holds %d bytes after the last command", i, fi.Size())
		}
		code, out, errOut = cliRun(t, env, "stats", "--json")
		var st struct {
			FreeBytes       *int64 `json:"freeBytes"`
			DiskFreeBytes   *int64 `json:"diskFreeBytes"`
			LastSaveFailure *struct {
				Error string `json:"error"`
				Full  bool   `json:"full"`
			} `json:"lastSaveFailure"`
		}
		if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 {
			t.Fatalf("%d: stats --json: exit %d, %v: %s %s", i, code, err, out, errOut)
		}
		if st.FreeBytes == nil || st.DiskFreeBytes == nil || st.LastSaveFailure == nil || !st.LastSaveFailure.Full ||
			!strings.Contains(st.LastSaveFailure.Error, "full") {
			t.Errorf("%d: stats: %s; want the free space and the failed save", i, out)
		}
		if code, out, _ := cliRun(t, env, "stats"); code != 0 || !strings.Contains(out, "free on disk") ||
			!strings.Contains(out, "last save failure") || !strings.Contains(out, "database or disk is full") {
			t.Errorf("%d: stats:\n%s", i, out)
		}
		os.Remove(env["SCROLLBACK_DB"])
	}
}

type runJSON struct {
	OutputID      string `json:"output_id"`
	Recovery      string `json:"recovery"`
	RecoveryError string `json:"recovery_error"`
}

func runResult(t *testing.T, code int, out string) runJSON {
	t.Helper()
	var r runJSON
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("run --json (exit %d): %v: %.300s", code, err, out)
	}
	return r
}
