// Package procgroup starts a command so that it and every process it starts
// can be stopped together, on each platform scrollback runs on: the runner
// and the proxy's command upstreams both start their processes through it.
//
// On Unix the command leads a new process group: Terminate and Kill send
// SIGTERM and SIGKILL to the whole group. On Windows the command is started
// suspended, put into a job object, then resumed, so that no child can be
// started outside the job; Windows has no polite stop request for a console
// tree, so Terminate ends the job at once, as Kill does, and closing the
// group ends whatever is left in it.
//
// The platform code lives in files with build constraints (procgroup_unix.go,
// exited_linux.go, exited_kqueue.go, pipe_linux.go, procgroup_windows.go);
// this file holds what is the same everywhere.
package procgroup

import (
	"os"
	"os/exec"
	"strings"
)

// Group is a started command together with every process it starts.
type Group interface {
	// WaitExited returns once the command's own process has exited. It
	// does not reap it: until cmd.Wait, its id keeps naming the group, so
	// that Kill cannot reach an unrelated process.
	WaitExited()
	// Terminate asks every process of the group to end: SIGTERM on Unix.
	// Windows has no such request for a console process tree; there it
	// ends them at once, as Kill does.
	Terminate()
	// Interrupt sends sig to every process of the group, as a terminal
	// sends Ctrl-C's SIGINT to its foreground group: the way to pass on a
	// signal the caller itself got. A signal the platform cannot send to
	// a group (any, on Windows) ends them as Terminate does.
	Interrupt(sig os.Signal)
	// Kill ends every process still in the group at once: SIGKILL to the
	// group on Unix, TerminateJobObject on Windows.
	Kill()
	// Status reports how the command ended, from its state after
	// cmd.Wait: its exit code, or (code nil) the name of the signal that
	// ended it, such as "SIGKILL". On Windows a command that Terminate or
	// Kill ended before it exited reports "SIGKILL", the nearest meaning.
	Status(ps *os.ProcessState) (code *int, signal string)
	// Close releases what the group holds (the job object on Windows,
	// which ends any process still in it); call it after cmd.Wait.
	Close() error
}

// Start starts cmd as a new group (see the package documentation) and
// returns it. cmd must not have been started. If Start returns an error,
// no process of cmd is left running.
func Start(cmd *exec.Cmd) (Group, error) { return start(cmd) }

// Shell returns the command that runs line through the platform's shell:
// /bin/sh -c on Unix, cmd.exe /d /s /c on Windows (with line passed
// verbatim, as cmd.exe parses its own command line).
func Shell(line string) *exec.Cmd { return shell(line) }

// ShellName names the platform's shell for messages: "/bin/sh" or
// "cmd.exe".
const ShellName = shellName

// TunePipe asks the system to give the pipe whose end is f a buffer of
// size bytes, where it can (Linux); elsewhere, or when refused, the
// system's default stays. It is best effort and reports nothing.
func TunePipe(f *os.File, size int) { tunePipe(f, size) }

// ForShell returns doc, a description written for Unix, with "/bin/sh -c"
// replaced by what runs commands on this platform ("cmd.exe /C" on
// Windows), so that a model is told which shell's syntax to write.
func ForShell(doc string) string { return forShell(shellName, doc) }

func forShell(shell, doc string) string {
	if shell == "/bin/sh" {
		return doc
	}
	return strings.ReplaceAll(doc, "/bin/sh -c", "cmd.exe /C (Windows)")
}
