package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// Exit statuses of an argument vector whose program never ran, as POSIX
// shells give them.
const (
	statusNotFound   = 127 // no such program
	statusCannotExec = 126 // found, but it cannot be run
)

// notRun is why the program of an argument vector did not run: the status
// a shell would give and the one line it would print.
type notRun struct {
	status int
	msg    string
}

func (n *notRun) Error() string { return n.msg }

// result is what Run returns for a program that did not run: its status,
// with the message written to stderr as the command's own output.
func (n *notRun) result(stderr io.Writer, took time.Duration) Result {
	if stderr != nil {
		io.WriteString(stderr, "scrollback: "+n.msg+"\n")
	}
	status := n.status
	return Result{ExitCode: &status, Duration: took}
}

// shellBuiltins are the commands a shell runs itself and no PATH holds, or
// holds only as a stand-in that cannot act on the shell (cd, exit): given
// as an argument vector, they deserve a word on why they were not found.
var shellBuiltins = map[string]bool{
	".": true, "alias": true, "break": true, "cd": true, "continue": true, "eval": true, "exec": true,
	"exit": true, "export": true, "readonly": true, "return": true, "set": true, "shift": true,
	"source": true, "trap": true, "ulimit": true, "umask": true, "unset": true, "wait": true,
}

// findProgram finds the program name names, as exec.LookPath does, but for
// a command that runs in dir with path as its PATH: a name with a path
// separator is taken relative to dir, a bare name is searched in path's
// absolute entries. It returns the program's path, or why it cannot run.
func findProgram(name, dir, path string) (string, *notRun) {
	if filepath.Base(name) != name {
		// Absolute, so that the child, which changes to dir before it
		// starts the program, finds the same file.
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
			if abs, err := filepath.Abs(p); err == nil {
				p = abs
			}
		}
		found, err := exec.LookPath(p)
		switch {
		case err == nil:
			return found, nil
		case errors.Is(err, fs.ErrNotExist):
			return "", &notRun{statusNotFound, name + ": no such file or directory"}
		}
		if fi, serr := os.Stat(p); serr == nil && fi.IsDir() {
			return "", &notRun{statusCannotExec, name + ": is a directory"}
		}
		if errors.Is(err, fs.ErrPermission) {
			return "", &notRun{statusCannotExec, name + ": permission denied (not executable)"}
		}
		return "", &notRun{statusCannotExec, name + ": cannot run: " + errText(err)}
	}
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue // "" and "." too: exec.LookPath refuses them (exec.ErrDot)
		}
		if found, err := exec.LookPath(filepath.Join(d, name)); err == nil {
			return found, nil
		}
	}
	msg := name + ": command not found"
	if shellBuiltins[name] {
		msg += " (" + name + " is a shell builtin: only a shell runs it, so give the whole command line as one shell command)"
	}
	return "", &notRun{statusNotFound, msg}
}

// pathOf returns the PATH in env, a list of KEY=VALUE (the last one wins,
// as the environment a process gets; names match without case on Windows).
func pathOf(env []string) string {
	path := ""
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && (k == "PATH" || runtime.GOOS == "windows" && strings.EqualFold(k, "PATH")) {
			path = v
		}
	}
	return path
}

// cannotStart returns the notRun for a program that was found but that
// the system refused to start (not a program it can run, a script whose
// interpreter is missing), or nil for a failure of another kind.
func cannotStart(name string, err error) *notRun {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &notRun{statusNotFound, name + ": cannot run: " + errText(err)}
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.ENOEXEC):
		return &notRun{statusCannotExec, name + ": cannot run: " + errText(err)}
	}
	return nil
}

// errText is the system's reason alone, without the operation and path a
// *fs.PathError or *exec.Error repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err.Error()
	}
	return fmt.Sprint(err)
}
