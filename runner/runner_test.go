//go:build unix

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while Run writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func intp(i int) *int { return &i }

func TestRunResults(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name       string
		cmd        Command
		wantCode   *int
		wantSignal string
		wantOut    string
		wantErr    string
	}{
		{name: "exit 0", cmd: Command{Command: "echo hello"}, wantCode: intp(0), wantOut: "hello\n"},
		{name: "exit status", cmd: Command{Command: "echo out; echo err >&2; exit 3"}, wantCode: intp(3), wantOut: "out\n", wantErr: "err\n"},
		{name: "command not found is a result", cmd: Command{Command: "no-such-command-scrollback"}, wantCode: intp(127)},
		{name: "killed by SIGKILL", cmd: Command{Command: "echo before; kill -KILL $$"}, wantSignal: "SIGKILL", wantOut: "before\n"},
		{name: "killed by SIGTERM", cmd: Command{Command: "kill -TERM $$"}, wantSignal: "SIGTERM"},
		{name: "stdin", cmd: Command{Command: "tr a-z A-Z", Stdin: "shout\n"}, wantCode: intp(0), wantOut: "SHOUT\n"},
		{name: "no stdin is empty", cmd: Command{Command: "cat; echo eof"}, wantCode: intp(0), wantOut: "eof\n"},
		{name: "large stdin not read", cmd: Command{Command: "true", Stdin: strings.Repeat("x", 1<<20)}, wantCode: intp(0)},
		{name: "cwd", cmd: Command{Command: "pwd", Dir: dir}, wantCode: intp(0), wantOut: dir + "\n"},
		{name: "env added and overriding", cmd: Command{Command: `echo "$SCROLLBACK_A $HOME"; test -n "$PATH"`,
			Env: map[string]string{"SCROLLBACK_A": "a b", "HOME": "/elsewhere"}}, wantCode: intp(0), wantOut: "a b /elsewhere\n"},
		{name: "invalid UTF-8 and NUL bytes pass through", cmd: Command{Command: `printf 'a\000b\377\n'`}, wantCode: intp(0), wantOut: "a\x00b\xff\n"},
		{name: "background job does not hold Run", cmd: Command{Command: "sleep 30 & echo started"}, wantCode: intp(0), wantOut: "started\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb syncBuffer
			tt.cmd.Stdout, tt.cmd.Stderr = &out, &errb
			start := time.Now()
			r, err := Run(context.Background(), tt.cmd)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			// Only a hang detector: "sleep 30 &" would hold Run for 30 s.
			if time.Since(start) > 20*time.Second {
				t.Errorf("Run took %v", time.Since(start))
			}
			if (r.ExitCode == nil) != (tt.wantCode == nil) || r.ExitCode != nil && *r.ExitCode != *tt.wantCode {
				t.Errorf("ExitCode = %v, want %v", deref(r.ExitCode), deref(tt.wantCode))
			}
			if r.Signal != tt.wantSignal || r.TimedOut {
				t.Errorf("Signal = %q, TimedOut = %v; want %q, false", r.Signal, r.TimedOut, tt.wantSignal)
			}
			if got := out.String(); got != tt.wantOut {
				t.Errorf("stdout = %q, want %q", got, tt.wantOut)
			}
			if tt.wantErr != "" && errb.String() != tt.wantErr {
				t.Errorf("stderr = %q, want %q", errb.String(), tt.wantErr)
			}
			if r.Duration <= 0 {
				t.Errorf("Duration = %v", r.Duration)
			}
		})
	}
}

func deref(p *int) string {
	if p == nil {
		return "nil"
	}
	return strconv.Itoa(*p)
}

func TestStartErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	tests := []struct {
		name     string
		cmd      Command
		sentinel error
		say      string // the message names the problem
	}{
		{"empty command", Command{Command: "  "}, ErrCommand, "empty"},
		{"NUL in command", Command{Command: "echo \x00"}, ErrCommand, "NUL"},
		{"missing cwd", Command{Command: "true", Dir: "/no/such/dir"}, ErrDir, `"/no/such/dir" does not exist`},
		{"cwd is a file", Command{Command: "true", Dir: file}, ErrDir, "is not a directory"},
		{"env name with =", Command{Command: "true", Env: map[string]string{"A=B": "c"}}, ErrEnv, `"A=B"`},
		{"env name with NUL", Command{Command: "true", Env: map[string]string{"A\x00": "c"}}, ErrEnv, "NUL"},
		{"empty env name", Command{Command: "true", Env: map[string]string{"": "c"}}, ErrEnv, "empty name"},
		{"env value with NUL", Command{Command: "true", Env: map[string]string{"A": "c\x00"}}, ErrEnv, "value of A"},
		{"negative timeout", Command{Command: "true", Timeout: -time.Second}, ErrTimeout, "negative"},
		{"Command and Args", Command{Command: "true", Args: []string{"true"}}, ErrCommand, "both Command and Args"},
		{"empty program name", Command{Args: []string{"", "x"}}, ErrCommand, "Args[0], is empty"},
		{"NUL in an argument", Command{Args: []string{"echo", "a", "b\x00"}}, ErrCommand, "argument 2 contains a NUL byte"},
		{"Args with a missing cwd", Command{Args: []string{"true"}, Dir: "/no/such/dir"}, ErrDir, `"/no/such/dir" does not exist`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Run(context.Background(), tt.cmd)
			if !errors.Is(err, tt.sentinel) {
				t.Fatalf("Run error = %v, want %v", err, tt.sentinel)
			}
			var e *Error
			if !errors.As(err, &e) || e.Hint == "" {
				t.Errorf("error %v is not an *Error with a hint", err)
			}
			if !strings.Contains(err.Error(), tt.say) || !strings.HasPrefix(err.Error(), "runner: ") {
				t.Errorf("error %q does not start with runner: and say %q", err, tt.say)
			}
			if r != (Result{}) {
				t.Errorf("Result = %+v, want zero", r)
			}
		})
	}
	_, err := Run(context.Background(), Command{Command: "true", Dir: "/no/such/dir"})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing cwd: %v does not wrap fs.ErrNotExist", err)
	}
}

// groupPID runs c with its output going to a buffer whose first line is
// the shell's pid ($$), which is the process group id.
func groupPID(t *testing.T, out *syncBuffer) int {
	t.Helper()
	line, _, _ := strings.Cut(out.String(), "\n")
	pid, err := strconv.Atoi(line)
	if err != nil {
		t.Fatalf("no pid on the first line of output %q", out.String()[:min(40, len(out.String()))])
	}
	return pid
}

// liveMembers returns the pids of processes in group pgid that are not
// zombies. (A zombie cannot run or write; it waits to be reaped by its
// parent, which for orphans is pid 1 and is outside our control.)
func liveMembers(pgid int) []int {
	if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
		return nil
	}
	var live []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 3 {
			continue
		}
		if g, _ := strconv.Atoi(f[2]); g == pgid && f[0] != "Z" && f[0] != "X" {
			live = append(live, pid)
		}
	}
	return live
}

// checkGroupGone waits for the kernel to finish killing the group and
// fails if a live process of it remains. The wait is a hang detector: a
// process that escaped the kill would live for ever.
func checkGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		live := liveMembers(pgid)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range live {
				syscall.Kill(p, syscall.SIGKILL)
			}
			t.Fatalf("processes %v of group %d are still alive", live, pgid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ready reports whether every marker line is in the output: the command
// prints them once its traps are set and its children started.
func ready(out string, markers []string) bool {
	for _, m := range markers {
		if !strings.Contains(out, "\n"+m+"\n") {
			return false
		}
	}
	return true
}

// The timeout is short; a busy machine may fire it before the command has
// set its traps and started its children, which would test something else.
// Each case is then run again with a timeout twice as long, until the
// command was ready when it fired, rather than betting that 300 ms is
// enough.
func TestTimeoutKillsTheWholeGroup(t *testing.T) {
	tests := []struct {
		name       string
		command    string
		markers    []string // printed once the command is set up
		grace      time.Duration
		wantSignal string
	}{
		{
			name:       "children keep writing",
			command:    "echo $$; (while :; do echo x; done) & echo ready; while :; do echo y; done",
			markers:    []string{"ready"},
			wantSignal: "SIGTERM",
		},
		{
			name:       "everyone ignores SIGTERM",
			command:    "echo $$; trap '' TERM; (while :; do echo x; done) & echo ready; sleep 30",
			markers:    []string{"ready"},
			grace:      200 * time.Millisecond,
			wantSignal: "SIGKILL",
		},
		{
			name:       "shell exits on SIGTERM, children ignore it",
			command:    "echo $$; (trap '' TERM; echo ready1; while :; do sleep 0.01; done) & (trap '' TERM; echo ready2; exec sleep 30) & wait",
			markers:    []string{"ready1", "ready2"},
			grace:      5 * time.Second, // must not be waited for: the shell is gone
			wantSignal: "SIGTERM",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for timeout := 300 * time.Millisecond; ; timeout *= 2 {
				var out syncBuffer
				start := time.Now()
				r, err := Run(context.Background(), Command{Command: tt.command, Timeout: timeout, Grace: tt.grace, Stdout: &out})
				took := time.Since(start)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				// A hang detector only: the commands run 30 s or forever.
				if took > 20*time.Second+2*timeout || r.Duration < timeout {
					t.Errorf("Run took %v (Duration %v), want %v to well under 20s more", took, r.Duration, timeout)
				}
				if !ready(out.String(), tt.markers) && timeout < 5*time.Second {
					if pid, err := strconv.Atoi(strings.SplitN(out.String(), "\n", 2)[0]); err == nil {
						checkGroupGone(t, pid)
					}
					t.Logf("the %v timeout fired before the command was set up; again with a longer one", timeout)
					continue
				}
				if !r.TimedOut || r.Signal != tt.wantSignal || r.ExitCode != nil {
					t.Errorf("TimedOut %v, Signal %q, ExitCode %v; want true, %q, nil", r.TimedOut, r.Signal, deref(r.ExitCode), tt.wantSignal)
				}
				checkGroupGone(t, groupPID(t, &out))
				return
			}
		})
	}
}

// The context is cancelled once the command has started its child, not
// after a fixed delay that a busy machine can beat.
func TestContextCancelStopsTheGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	go func() {
		for ctx.Err() == nil && !ready(out.String(), []string{"ready"}) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	r, err := Run(ctx, Command{Command: "echo $$; (while :; do echo y; done) & echo ready; sleep 30", Stdout: &out})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run error = %v, want one wrapping context.Canceled", err)
	}
	if r.TimedOut || r.Signal != "SIGTERM" || r.Duration <= 0 {
		t.Errorf("Result = %+v; want TimedOut false, Signal SIGTERM, a duration", r)
	}
	if took := time.Since(start); took > 20*time.Second { // the command would run 30 s
		t.Errorf("Run took %v after a cancel", took)
	}
	checkGroupGone(t, groupPID(t, &out))

	// A context that is already done starts nothing.
	r, err = Run(ctx, Command{Command: "touch " + filepath.Join(t.TempDir(), "ran")})
	if !errors.Is(err, context.Canceled) || r != (Result{}) {
		t.Errorf("Run with a done context = %+v, %v", r, err)
	}
}

// interruption is a context cause that says which signal interrupted the
// caller, as scrollback run's is.
type interruption struct{ sig os.Signal }

func (i interruption) Error() string     { return "interrupted by " + i.sig.String() }
func (i interruption) Signal() os.Signal { return i.sig }

// A context ended by a signal the caller got passes that signal on to the
// group, as a terminal passes Ctrl-C on: the command may handle it.
func TestContextCancelPassesTheSignalOn(t *testing.T) {
	for _, tt := range []struct {
		name, command, wantOut, wantSignal string
		wantCode                           *int
	}{
		{"handled", `trap 'echo caught INT; exit 7' INT; echo $$; echo ready; while :; do sleep 0.05; done`, "caught INT", "", intp(7)},
		{"default action", "echo $$; echo ready; exec sleep 30", "", "SIGINT", nil},
		// Stopped, as a command reading the terminal from its own group
		// is (SIGTTIN): it still gets the signal, not SIGKILL after the
		// grace period.
		{"stopped", "echo $$; echo ready; kill -STOP $$; sleep 30", "", "SIGINT", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A test started with SIGINT ignored (in the background of a
			// shell) would pass that on to the command, which could then
			// not trap it: handle it here, so that the command starts with
			// the default action, as under scrollback run (which handles it).
			sigs := make(chan os.Signal, 1)
			signal.Notify(sigs, syscall.SIGINT)
			defer signal.Stop(sigs)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var out syncBuffer
			go func() {
				for ctx.Err() == nil && !ready(out.String(), []string{"ready"}) {
					time.Sleep(10 * time.Millisecond)
				}
				// The stopped case: wait until ps says it is stopped (T).
				pid, _, _ := strings.Cut(out.String(), "\n")
				for tt.name == "stopped" && ctx.Err() == nil {
					st, _ := exec.Command("ps", "-o", "stat=", "-p", pid).Output()
					if strings.HasPrefix(strings.TrimSpace(string(st)), "T") {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
				cancel(interruption{syscall.SIGINT})
			}()
			r, err := Run(ctx, Command{Command: tt.command, Stdout: &out})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Run error = %v, want one wrapping context.Canceled", err)
			}
			if r.Signal != tt.wantSignal || deref(r.ExitCode) != deref(tt.wantCode) || !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("Signal %q, ExitCode %v, output %q; want %q, %v, %q", r.Signal, deref(r.ExitCode), out.String(), tt.wantSignal, deref(tt.wantCode), tt.wantOut)
			}
		})
	}
}

func TestEscapedProcessDoesNotHoldRun(t *testing.T) {
	// A process that leaves the group (setsid) keeps stdout open; Run
	// still returns shortly after the shell exits, and says that it
	// stopped reading an output still open: what the process writes
	// later is not in it.
	took, r := runEscaped(t, "exec sleep 30")
	if took > 20*time.Second { // held until the escaped sleep 30 ends
		t.Errorf("Run took %v with an escaped process holding stdout", took)
	}
	if !r.OutputCut {
		t.Errorf("Run = %+v: OutputCut false, yet stdout was still open when reading stopped", r)
	}
}

// A command whose output ends (every holder of the pipes exits) was read
// to its end: OutputCut is false, background jobs of the group included.
func TestOutputReadToItsEnd(t *testing.T) {
	for _, c := range []string{"echo hi", "echo hi >&2; exit 3", "(sleep 0.2; echo late) & echo early"} {
		r, err := Run(context.Background(), Command{Command: c})
		if err != nil || r.OutputCut {
			t.Errorf("Run(%q) = %+v, %v; want OutputCut false", c, r, err)
		}
	}
}

// runEscaped runs a shell that starts body in a group of its own (setsid),
// holding the shell's stdout, and exits; it kills that group once Run has
// returned, and returns how long Run took. The shell waits for the
// escaped process to have printed its pid (it then makes a marker file),
// not for a fixed 0.2 s a busy machine can outlast.
func runEscaped(t *testing.T, body string) (time.Duration, Result) {
	t.Helper()
	marker := filepath.Join(t.TempDir(), "escaped")
	var out syncBuffer
	start := time.Now()
	r, err := Run(context.Background(), Command{
		Command: "setsid sh -c 'echo $$; : > \"$0\"; " + body + "' '" + marker + "' & while [ ! -e '" + marker + "' ]; do sleep 0.01; done; echo done >&2",
		Stdout:  &out,
	})
	took := time.Since(start)
	if err != nil || r.ExitCode == nil || *r.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", r, err)
	}
	syscall.Kill(-groupPID(t, &out), syscall.SIGKILL) // the escaped process's own group
	return took, r
}

func TestLargeOutputIsReadWhole(t *testing.T) {
	var n countWriter
	r, err := Run(context.Background(), Command{Command: "head -c 50000000 /dev/zero; echo end >&2", Stdout: &n, Stderr: &n})
	if err != nil || *r.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", r, err)
	}
	if n.n != 50000004 {
		t.Errorf("read %d bytes, want 50000004", n.n)
	}
}

// With Gather, output is read whole and in order however it is written:
// many small writes past gatherAfter (where the reader pauses after short
// reads), on one stream or both, and large ones; Gather changes when the
// reader reads, never what it gets.
func TestGatherReadsWhole(t *testing.T) {
	seq := func(n int) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, "%d\n", i)
		}
		return b.String()
	}
	for _, c := range []struct {
		name, command  string
		stdout, stderr string
	}{
		{"small writes past gatherAfter", "seq 1 400000", seq(400000), ""},
		{"both streams", "seq 1 300000; seq 1 200000 >&2; echo end", seq(300000) + "end\n", seq(200000)},
		{"a trickle after a burst", "seq 1 300000; for i in 1 2 3; do echo $i; sleep 0.05; done", seq(300000) + "1\n2\n3\n", ""},
		{"large writes", "head -c 5000000 /dev/zero", strings.Repeat("\x00", 5000000), ""},
	} {
		var out, errOut syncBuffer
		r, err := Run(context.Background(), Command{Command: c.command, Stdout: &out, Stderr: &errOut, Gather: true})
		if err != nil || r.ExitCode == nil || *r.ExitCode != 0 || r.OutputCut {
			t.Fatalf("%s: Run = %+v, %v", c.name, r, err)
		}
		if got := out.b.String(); got != c.stdout {
			t.Errorf("%s: stdout is %d bytes, want %d: not the output as written", c.name, len(got), len(c.stdout))
		}
		if got := errOut.b.String(); got != c.stderr {
			t.Errorf("%s: stderr is %d bytes, want %d: not the output as written", c.name, len(got), len(c.stderr))
		}
	}
}

// Output the command left in the pipe is read whole once it has exited,
// however long storing each piece takes (a busy machine's store): a writer
// slower than drainDelay per write must not lose the rest.
func TestSlowWriterAfterExitIsReadWhole(t *testing.T) {
	w := slowWriter{delay: 3 * drainDelay / 2}
	r, err := Run(context.Background(), Command{Command: "head -c 200000 /dev/zero", Stdout: &w})
	if err != nil || r.ExitCode == nil || *r.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", r, err)
	}
	if w.n.n != 200000 {
		t.Errorf("read %d bytes, want all 200000", w.n.n)
	}
	if w.calls < 2 {
		t.Errorf("%d writes: the output was stored in one piece, so nothing was left in the pipe to drain", w.calls)
	}
}

type slowWriter struct {
	delay time.Duration
	calls int
	n     countWriter
}

func (s *slowWriter) Write(p []byte) (int, error) {
	s.calls++
	time.Sleep(s.delay)
	return s.n.Write(p)
}

// A process outside the group that writes without end cannot hold Run
// for ever: past drainLimit it stops reading.
func TestEscapedWriterDoesNotHoldRun(t *testing.T) {
	t.Parallel()
	took, r := runEscaped(t, "while :; do echo tick; sleep 0.05; done")
	if took > 3*drainLimit { // a hang detector, not a timing bound
		t.Errorf("Run took %v with an escaped process writing to stdout", took)
	}
	if !r.OutputCut {
		t.Errorf("Run = %+v: OutputCut false, yet the escaped process was still writing", r)
	}
}

type countWriter struct {
	mu sync.Mutex
	n  int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.n += int64(len(p))
	c.mu.Unlock()
	return len(p), nil
}

type failWriter struct{ calls int }

func (f *failWriter) Write(p []byte) (int, error) {
	f.calls++
	return 0, errors.New("disk full")
}

func TestFailingWriterDoesNotBlockTheCommand(t *testing.T) {
	var f failWriter
	r, err := Run(context.Background(), Command{Command: "head -c 10000000 /dev/zero; echo ok", Stdout: &f, Timeout: 10 * time.Second})
	if err != nil || r.TimedOut || *r.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", r, err)
	}
	if f.calls != 1 {
		t.Errorf("the failing writer was called %d times, want 1", f.calls)
	}
}

func TestNilWritersDiscard(t *testing.T) {
	r, err := Run(context.Background(), Command{Command: "seq 100000; seq 1000 >&2"})
	if err != nil || *r.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", r, err)
	}
}

func TestEnviron(t *testing.T) {
	got := environ([]string{"A=1", "B=2", "C=3=x", "weird"}, map[string]string{"B": "20", "D": "4", "C": ""})
	want := []string{"A=1", "weird", "B=20", "C=", "D=4"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("environ = %q, want %q", got, want)
	}
}

func TestErrorMessage(t *testing.T) {
	_, err := Run(context.Background(), Command{Command: "true", Dir: "/nope"})
	want := `runner: invalid working directory: "/nope" does not exist (give an existing directory, or "" for the current one)`
	if err == nil || err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

// An argument vector reaches the program unchanged, with no shell between:
// spaces, quotes, $ and glob characters stay in their argument. A program
// that is not found or cannot run ends as a shell's would (127, 126), with
// one line on stderr, and is a result, not an error.
func TestRunArgs(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	write := func(name, text string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("bin/mytool", "#!/bin/sh\necho \"mytool $*\"\n", 0o755)
	write("tool", "#!/bin/sh\necho \"tool in $PWD: $1\"\n", 0o755)
	write("plain", "#!/bin/sh\necho never\n", 0o644)
	write("garbage", "\x7fnot a program\x00\x01", 0o755)
	write("badinterp", "#!/no/such/interpreter\n", 0o755)
	sysPath := os.Getenv("PATH")
	tests := []struct {
		name     string
		cmd      Command
		wantCode int
		wantOut  string
		wantErr  string // a substring of stderr
	}{
		{name: "spaces stay in their argument", cmd: Command{Args: []string{"printf", "%s|", "a b", "c"}}, wantOut: "a b|c|"},
		{name: "no expansion", cmd: Command{Args: []string{"echo", "$HOME", "*", "'q'", `"d"`, "a;b", "`x`"}}, wantOut: "$HOME * 'q' \"d\" a;b `x`\n"},
		{name: "empty argument kept", cmd: Command{Args: []string{"printf", "[%s]", "", "x"}}, wantOut: "[][x]"},
		{name: "exit status", cmd: Command{Args: []string{"sh", "-c", "exit 3"}}, wantCode: 3},
		{name: "stdin and env", cmd: Command{Args: []string{"sh", "-c", `tr a-z A-Z; echo "$GREETING"`}, Stdin: "in\n", Env: map[string]string{"GREETING": "hi there"}}, wantOut: "IN\nhi there\n"},
		{name: "absolute path", cmd: Command{Args: []string{filepath.Join(dir, "tool"), "x y"}, Dir: bin}, wantOut: "tool in " + bin + ": x y\n"},
		{name: "relative path is taken in Dir", cmd: Command{Args: []string{"./tool", "x"}, Dir: dir}, wantOut: "tool in " + dir + ": x\n"},
		{name: "PATH from Env", cmd: Command{Args: []string{"mytool", "a  b"}, Env: map[string]string{"PATH": bin + string(os.PathListSeparator) + sysPath}}, wantOut: "mytool a  b\n"},
		{name: "not found", cmd: Command{Args: []string{"no-such-program-scrollback", "x"}}, wantCode: 127, wantErr: "scrollback: no-such-program-scrollback: command not found\n"},
		{name: "not on the inherited PATH when Env replaces it", cmd: Command{Args: []string{"sh", "-c", "true"}, Env: map[string]string{"PATH": bin}}, wantCode: 127, wantErr: "sh: command not found"},
		{name: "relative PATH entry skipped", cmd: Command{Args: []string{"tool"}, Dir: dir, Env: map[string]string{"PATH": "." + string(os.PathListSeparator) + bin}}, wantCode: 127, wantErr: "tool: command not found"},
		{name: "a shell builtin says so", cmd: Command{Args: []string{"exit", "3"}}, wantCode: 127, wantErr: "exit is a shell builtin"},
		{name: "no such file", cmd: Command{Args: []string{"./missing"}, Dir: dir}, wantCode: 127, wantErr: "scrollback: ./missing: no such file or directory\n"},
		{name: "not executable", cmd: Command{Args: []string{"./plain"}, Dir: dir}, wantCode: 126, wantErr: "./plain: permission denied"},
		{name: "a directory", cmd: Command{Args: []string{bin}}, wantCode: 126, wantErr: bin + ": is a directory"},
		{name: "not a program", cmd: Command{Args: []string{"./garbage"}, Dir: dir}, wantCode: 126, wantErr: "./garbage: cannot run: exec format error"},
		{name: "missing interpreter", cmd: Command{Args: []string{"./badinterp"}, Dir: dir}, wantCode: 127, wantErr: "./badinterp: cannot run: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb syncBuffer
			tt.cmd.Stdout, tt.cmd.Stderr = &out, &errb
			r, err := Run(context.Background(), tt.cmd)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if r.ExitCode == nil || *r.ExitCode != tt.wantCode || r.Signal != "" || r.TimedOut {
				t.Errorf("Result = %+v (code %s), want exit %d", r, deref(r.ExitCode), tt.wantCode)
			}
			if out.String() != tt.wantOut {
				t.Errorf("stdout = %q, want %q", out.String(), tt.wantOut)
			}
			if tt.wantErr == "" && errb.String() != "" || !strings.Contains(errb.String(), tt.wantErr) {
				t.Errorf("stderr = %q, want it to hold %q", errb.String(), tt.wantErr)
			}
		})
	}
}

// An argument vector runs in its own process group as a command line does:
// a timeout stops the whole group, children included.
func TestRunArgsTimeoutKillsTheGroup(t *testing.T) {
	for timeout := 300 * time.Millisecond; ; timeout *= 2 {
		var out syncBuffer
		r, err := Run(context.Background(), Command{
			Args:    []string{"sh", "-c", "echo $$; (while :; do echo x; done) & echo ready; while :; do echo y; done"},
			Timeout: timeout,
			Stdout:  &out,
		})
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if !ready(out.String(), []string{"ready"}) && timeout < 5*time.Second {
			if pid, err := strconv.Atoi(strings.SplitN(out.String(), "\n", 2)[0]); err == nil {
				checkGroupGone(t, pid)
			}
			continue
		}
		if !r.TimedOut || r.Signal != "SIGTERM" || r.ExitCode != nil {
			t.Errorf("TimedOut %v, Signal %q, ExitCode %v; want true, SIGTERM, nil", r.TimedOut, r.Signal, deref(r.ExitCode))
		}
		checkGroupGone(t, groupPID(t, &out))
		return
	}
}

// StdinFile is passed on as it is: the command reads the file itself.
func TestStdinFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(path, []byte("from a file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out syncBuffer
	if r, err := Run(context.Background(), Command{Command: "tr a-z A-Z", StdinFile: f, Stdout: &out}); err != nil || deref(r.ExitCode) != "0" || out.String() != "FROM A FILE\n" {
		t.Errorf("Run = %+v, %v, output %q; want exit 0 and FROM A FILE", r, err, out.String())
	}
	if _, err := Run(context.Background(), Command{Command: "cat", Stdin: "x", StdinFile: f}); !errors.Is(err, ErrCommand) {
		t.Errorf("Stdin and StdinFile both: %v, want ErrCommand", err)
	}
	// A file closed before the call (a defer that ran too early) is
	// refused by name; before, the command ran with no standard input
	// and its own "Bad file descriptor" was all that said so.
	closed, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	var ran syncBuffer
	if _, err := Run(context.Background(), Command{Command: "cat; echo ran", StdinFile: closed, Stdout: &ran}); !errors.Is(err, ErrCommand) ||
		!strings.Contains(err.Error(), "StdinFile is closed") || ran.String() != "" {
		t.Errorf("closed StdinFile: %v, output %q; want ErrCommand saying StdinFile is closed, and nothing run", err, ran.String())
	}
}
