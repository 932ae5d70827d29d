package codemode

import (
	"os/exec"
	"syscall"
)

// killWithParent has the kernel kill the worker if the server dies.
func killWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
