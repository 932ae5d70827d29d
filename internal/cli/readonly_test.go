package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"
)

// canMakeReadOnly reports whether the readonly script command can take a
// directory's writes away here: by its modes for a user other than root
// (whom modes do not stop), by a read-only bind mount for root on Linux
// where mounting works (not in every container). Windows has no directory
// modes.
var canMakeReadOnly = sync.OnceValue(func() bool {
	switch {
	case runtime.GOOS == "windows":
		return false
	case os.Geteuid() != 0:
		return true
	case runtime.GOOS != "linux":
		return false
	}
	dir, err := os.MkdirTemp("", "scrollback-romount-")
	if err != nil {
		return false
	}
	defer os.Remove(dir)
	if err := roMount(dir); err != nil {
		return false
	}
	return exec.Command("umount", dir).Run() == nil
})

// roMount mounts dir over itself, read-only.
func roMount(dir string) error {
	if out, err := exec.Command("mount", "--bind", dir, dir).CombinedOutput(); err != nil {
		return &mountError{err, out}
	}
	if out, err := exec.Command("mount", "-o", "remount,ro,bind", dir).CombinedOutput(); err != nil {
		exec.Command("umount", dir).Run()
		return &mountError{err, out}
	}
	return nil
}

type mountError struct {
	err error
	out []byte
}

func (e *mountError) Error() string { return e.err.Error() + ": " + string(bytes.TrimSpace(e.out)) }

// cmdReadOnly takes the writes of DIR and the files in it away until the
// script ends (check the readonly condition first):
//
//	readonly DIR
func cmdReadOnly(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: readonly DIR")
	}
	dir := ts.MkAbs(args[0])
	if os.Geteuid() == 0 {
		ts.Check(roMount(dir))
		ts.Defer(func() { ts.Check(exec.Command("umount", dir).Run()) })
		return
	}
	entries, err := os.ReadDir(dir)
	ts.Check(err)
	for _, e := range entries {
		ts.Check(os.Chmod(filepath.Join(dir, e.Name()), 0o444))
	}
	ts.Check(os.Chmod(dir, 0o555))
	ts.Defer(func() { os.Chmod(dir, 0o755) }) // so that the work directory can be removed
}
