package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel end a busy loop if this command dies.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
