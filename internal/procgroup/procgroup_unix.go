//go:build unix

package procgroup

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

const shellName = "/bin/sh"

func shell(line string) *exec.Cmd { return exec.Command("/bin/sh", "-c", line) }

// unixGroup is a process group whose id is its leader's pid.
type unixGroup struct{ pid int }

func start(cmd *exec.Cmd) (Group, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return unixGroup{pid: cmd.Process.Pid}, nil
}

func (g unixGroup) WaitExited() { waitExited(g.pid) }
func (g unixGroup) Terminate()  { g.send(unix.SIGTERM) }
func (g unixGroup) Kill()       { unix.Kill(-g.pid, unix.SIGKILL) }

func (g unixGroup) Interrupt(sig os.Signal) {
	s, ok := sig.(syscall.Signal)
	if !ok || s == 0 {
		g.Terminate()
		return
	}
	g.send(s)
}

// send sends s to the group, then SIGCONT, as a shell's kill does to a
// stopped job: a process that is stopped (one that read the terminal from
// this background group got SIGTTIN) acts on s only once it runs again;
// without SIGCONT it waited for SIGKILL after the grace period.
func (g unixGroup) send(s syscall.Signal) {
	unix.Kill(-g.pid, s)
	unix.Kill(-g.pid, unix.SIGCONT)
}

func (g unixGroup) Close() error { return nil }

func (g unixGroup) Status(ps *os.ProcessState) (*int, string) {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return nil, signalName(ws.Signal())
	}
	code := ps.ExitCode()
	return &code, ""
}

func signalName(s syscall.Signal) string {
	if name := unix.SignalName(s); name != "" {
		return name
	}
	return fmt.Sprintf("signal %d", int(s))
}
