package procgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

const shellName = "cmd.exe"

// shell runs line with cmd.exe /d /s /c "line": /d skips AutoRun commands,
// /s makes cmd.exe strip exactly the outer quotes and keep line as given.
// The command line is set whole, because Go's argument quoting is not
// cmd.exe's.
func shell(line string) *exec.Cmd {
	comspec := os.Getenv("ComSpec")
	if comspec == "" {
		comspec = filepath.Join(os.Getenv("SystemRoot"), "System32", "cmd.exe")
	}
	cmd := exec.Command(comspec)
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: `cmd.exe /d /s /c "` + line + `"`}
	return cmd
}

// killedCode is the exit code Kill gives the processes it ends.
const killedCode = 137 // 128 + SIGKILL, as a Unix shell would report

// jobGroup is a process and its descendants held in a job object.
type jobGroup struct {
	job     windows.Handle
	process windows.Handle // the command's own process
	killed  atomic.Bool    // Kill ended the command before it exited
}

func start(cmd *exec.Cmd) (Group, error) {
	job, err := newJob()
	if err != nil {
		return nil, err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// Suspended until it is in the job, so that no child it starts can
	// escape the job.
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
	if err := cmd.Start(); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	pid := uint32(cmd.Process.Pid)
	// os.Process holds its own handle until Wait, so pid names this
	// process while we open ours.
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE|windows.PROCESS_SET_QUOTA|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err == nil {
		err = windows.AssignProcessToJobObject(job, h)
		if err == nil {
			err = resume(pid)
		}
		if err != nil {
			windows.CloseHandle(h)
		}
	}
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		windows.CloseHandle(job)
		return nil, fmt.Errorf("procgroup: cannot put the process in a job object: %w", err)
	}
	return &jobGroup{job: job, process: h}, nil
}

// newJob makes a job object whose processes all end when its last handle
// closes, so that nothing outlives scrollback's hold on it.
func newJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("procgroup: cannot create a job object: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, fmt.Errorf("procgroup: cannot configure a job object: %w", err)
	}
	return job, nil
}

// resume resumes every thread of process pid (a process created suspended
// has one).
func resume(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	var te windows.ThreadEntry32
	te.Size = uint32(unsafe.Sizeof(te))
	resumed := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return err
		}
		resumed++
	}
	if resumed == 0 {
		return errors.New("no thread of the new process was found to resume")
	}
	return nil
}

func (g *jobGroup) WaitExited() {
	windows.WaitForSingleObject(g.process, windows.INFINITE)
}

func (g *jobGroup) Terminate() { g.Kill() }

// Interrupt ends the job: a console process tree has no signal to pass on.
func (g *jobGroup) Interrupt(os.Signal) { g.Kill() }

func (g *jobGroup) Kill() {
	if ev, _ := windows.WaitForSingleObject(g.process, 0); ev == uint32(windows.WAIT_TIMEOUT) {
		g.killed.Store(true)
	}
	windows.TerminateJobObject(g.job, killedCode)
}

func (g *jobGroup) Status(ps *os.ProcessState) (*int, string) {
	if g.killed.Load() {
		return nil, "SIGKILL"
	}
	code := ps.ExitCode()
	return &code, ""
}

func (g *jobGroup) Close() error {
	err := windows.CloseHandle(g.process)
	if jerr := windows.CloseHandle(g.job); err == nil {
		err = jerr
	}
	return err
}
