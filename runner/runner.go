// Package runner runs one command the way an agent's tool should: in its
// own process group, with a timeout that stops the whole group, and with no
// process of the group left behind when it returns.
//
// Run starts /bin/sh -c COMMAND (or, given an argument vector, that program
// with those exact arguments and no shell) as the leader of a new process
// group, with the given working directory, environment additions and
// standard input, and copies its stdout and stderr to the given writers. It
// returns when the leader has exited and the output has been read.
//
// How a command ends is a result, never an error: a non-zero exit status, a
// command that cannot be found (status 127) or run (status 126), death by a
// signal, a timeout. Run returns an error only when the command could not be
// started (a working directory that does not exist, an invalid environment
// variable), or, together with the result, when ctx ended first.
//
// # Shell command line or argument vector
//
// Command.Command is a shell command line, for pipelines, redirections and
// builtins: it runs as /bin/sh -c COMMAND. Command.Args is an argument
// vector that runs as it is, as exec would: each argument reaches the
// program unchanged, spaces, quotes and $ included. Its program is found as
// exec.LookPath finds it, but with what the command will have: the PATH of
// Command.Env when that sets one, and a name with a slash (./tool) taken
// relative to Command.Dir. Like exec.LookPath, and unlike a shell, the
// search skips relative PATH entries (".", or an empty one): name such a
// program ./tool. A program that is not found ends with status 127, one
// that cannot be run (a directory, no execute permission, not a program
// the system can start) with 126, each with a one-line message on Stderr,
// as a shell gives them.
//
// # Stopping
//
// On timeout, or when ctx is done, Run sends SIGTERM to the whole process
// group, then SIGKILL once the grace period has passed. Whether the shell
// exits on its own or is stopped, Run then sends SIGKILL to the group, so
// background jobs and children that ignored SIGTERM do not outlive the
// command: a command cannot leave processes behind unless it moves them out
// of its group on purpose (setsid). Output still held open by such escaped
// processes is read for at most a short delay after the group is gone;
// Result.OutputCut then says that reading stopped before the output ended.
//
// # Platforms
//
// On Linux and macOS (and the BSDs) the above holds as written; only Linux
// lets Run enlarge the output pipes. On Windows a command line runs with
// cmd.exe /d /s /c COMMAND, and an argument vector runs its program
// directly, its arguments joined into one command line by Go's quoting
// (syscall.EscapeArg), which the C runtime's argument parser that most
// programs use undoes exactly (a .bat or .cmd program is the exception:
// Windows runs it through cmd.exe, which parses that line its own way).
// Either runs inside a job object that holds it and every process it
// starts: there is no SIGTERM for a console process tree, so a timeout or a
// done ctx ends the whole job at once (no grace period), and the Result
// reports Signal "SIGKILL" and a nil ExitCode, as on Unix. No process can
// leave the job.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/scrollback-dev/scrollback/internal/errkind"
	"github.com/scrollback-dev/scrollback/internal/procgroup"
)

// DefaultGrace is the time between SIGTERM and SIGKILL when a command is
// stopped, unless Command.Grace says otherwise.
const DefaultGrace = 2 * time.Second

// drainDelay bounds how long Run waits for output that has stopped coming
// once the command's process group is gone: only processes that left the
// group (setsid) can still hold the pipes open then. Output still coming
// (the rest of a pipe's buffer behind a slow store on a busy machine) is
// read on, up to drainLimit.
const drainDelay = 500 * time.Millisecond

// drainLimit bounds how long Run reads output that keeps coming once the
// group is gone: a process outside the group writing without end.
const drainLimit = 10 * time.Second

// readBuffer is the size of the buffer each output pipe is read with. With
// pipeSize, measured best of 64 KiB to 1 MiB on cat of a 1 GiB file: large
// enough for few system calls, small enough to stay in the L2 cache while
// the capture copies it.
const readBuffer = 128 << 10

// pipeSize is the pipe capacity Run asks the kernel for, so that a fast
// writer needs fewer wake-ups; the default (64 KiB) is kept if refused.
const pipeSize = 256 << 10

// Sentinel errors: every error Run returns before starting the command
// wraps one of them. All but ErrStart are scrollback.ErrArgument too.
var (
	ErrCommand = errkind.New("runner: invalid command", errkind.Argument)              // empty, holds a NUL byte, or both Command and Args given
	ErrDir     = errkind.New("runner: invalid working directory", errkind.Argument)    // missing, not a directory, not reachable
	ErrEnv     = errkind.New("runner: invalid environment variable", errkind.Argument) // empty name, '=' or NUL in a name, NUL in a value
	ErrTimeout = errkind.New("runner: invalid timeout", errkind.Argument)              // negative
	ErrStart   = errors.New("runner: the command could not be started")                // the system refused (no /bin/sh, no pipes, chdir failed)
)

// Error is a command that could not be started: what was wrong and what
// would be right.
type Error struct {
	Op     string // what was wrong: "command", "cwd", "env", "timeout", "start"
	Err    error  // one of the sentinel errors above
	Detail string // the offending value or the system's message
	Hint   string // what would be right
	Cause  error  // the system's error, when there is one
}

func (e *Error) Error() string {
	s := e.Err.Error()
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Hint != "" {
		s += " (" + e.Hint + ")"
	}
	return s
}

// Unwrap returns the sentinel error and the system's error, if any, so that
// errors.Is works with either (ErrDir, fs.ErrNotExist).
func (e *Error) Unwrap() []error {
	if e.Cause != nil {
		return []error{e.Err, e.Cause}
	}
	return []error{e.Err}
}

// Command is one command to run: a shell command line (Command) or an
// argument vector (Args), not both.
type Command struct {
	Command string // a command line, run by /bin/sh -c (cmd.exe /d /s /c on Windows)
	// Args, when not empty, is run as that exact argument vector, with no
	// shell: Args[0] names the program (found as the package
	// documentation says), and Args[1:] reach it unchanged.
	Args  []string
	Dir   string            // working directory; "" = the current one
	Env   map[string]string // added to (and overriding) the inherited environment
	Stdin string            // given on standard input; without it (and StdinFile), stdin is empty (/dev/null)
	// StdinFile, when not nil, is the command's standard input as it is:
	// the command inherits the descriptor (a pipe, a file), as it would
	// from a shell, and reads as much of it as it wants. Not with Stdin;
	// a closed file is refused (ErrCommand).
	StdinFile *os.File
	Timeout   time.Duration // stop the process group after this long; 0 = no timeout
	Grace     time.Duration // between SIGTERM and SIGKILL when stopping; 0 = DefaultGrace

	// Stdout and Stderr receive the command's output as it arrives; nil
	// discards it. A writer that fails is not written to again, but the
	// output is still read so that the command does not block.
	Stdout, Stderr io.Writer

	// Gather reads a fast writer's output in fewer, larger reads, for a
	// process that runs this one command and little else (scrollback
	// run): once a stream has given more than gatherAfter bytes, a read
	// that returns less than a quarter of the read buffer is followed by
	// a pause of gatherPause, holding the reader's thread (on Linux; a
	// no-op elsewhere), so that the next read takes what the writer wrote
	// meanwhile. A program writing through stdio to a pipe writes 4 KiB
	// at a time (seq 1 12000000: 23,000 writes), and reading each one as
	// it came (a read, a wait in the poller, a wake-up) cost the reader
	// more than the writer. No pause while the other stream is writing
	// too, so that the merged output keeps the order of the two as it
	// did. The pause holds a thread of the Go scheduler meanwhile: not
	// for a server, whose other goroutines would wait.
	Gather bool
}

// gatherAfter is how much a stream must have given before Gather pauses
// its reads: the output of most commands is read as it comes.
const gatherAfter = 1 << 20

// gatherPause is Gather's pause: a writer at 650 MB/s (seq) writes 130
// KiB meanwhile, half the pipe (pipeSize), and does not block on it.
// Measured on seq 1 12000000 (2 cores, scrollback run, p50 of 15): 231
// ms and 298 ms of CPU without, 205 and 257 with 200 us; 500 us with a 1
// MiB pipe timed the same.
const gatherPause = 200 * time.Microsecond

// Result is how a command ended.
type Result struct {
	ExitCode *int          // the exit status (127: not found, 126: cannot be run); nil when killed by a signal
	Signal   string        // the signal that killed the group's leader ("SIGKILL", "SIGTERM", ...); "" when it exited
	TimedOut bool          // the timeout stopped it (not ctx: see Run)
	Duration time.Duration // from start until the group's leader ended
	// OutputCut reports that reading stopped while stdout or stderr was
	// still open: a process that left the group (setsid) held it after
	// the group was gone, so what it wrote later is not in the output.
	OutputCut bool
}

// Run runs c and waits for it to end. It returns an *Error, and a zero
// Result, when the command could not be started. When ctx is done before the
// command ends, Run stops the process group as a timeout would and returns
// the Result (TimedOut false, Signal or ExitCode as it ended, Duration > 0)
// together with an error wrapping ctx.Err(). When ctx's cause
// (context.Cause) is an interruption by a signal, an error with a method
// Signal() os.Signal, the group gets that signal instead of SIGTERM, as a
// terminal's foreground group gets Ctrl-C's SIGINT (then SIGKILL after the
// grace period, as ever): `scrollback run` passes on the signal it got.
//
// Run's steps: check the command, start it in its own group with its
// output pumped to the writers, wait for it to exit or stop it, then clean
// up (end the rest of the group, drain the output, reap the shell).
func Run(ctx context.Context, c Command) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("runner: not started: %w", err)
	}
	if err := check(c); err != nil {
		return Result{}, err
	}
	began := time.Now()
	r, err := start(c)
	var nr *notRun
	if errors.As(err, &nr) {
		return nr.result(c.Stderr, time.Since(began)), nil
	}
	if err != nil {
		return Result{}, err
	}
	var res Result
	var ctxErr error
	res.TimedOut, ctxErr = r.await(ctx, c.Timeout, c.grace())
	res.Duration = time.Since(r.started)
	r.cleanUp()
	res.OutputCut = r.progress.cut.Load()
	res.ExitCode, res.Signal = r.group.Status(r.cmd.ProcessState)
	r.group.Close()
	if ctxErr != nil {
		return res, fmt.Errorf("runner: command stopped because its context ended: %w", ctxErr)
	}
	return res, nil
}

// grace is the time between SIGTERM and SIGKILL for c.
func (c Command) grace() time.Duration {
	if c.Grace <= 0 {
		return DefaultGrace
	}
	return c.Grace
}

// running is a started command: the shell, its group, and the readers of
// its output.
type running struct {
	cmd        *exec.Cmd
	group      procgroup.Group
	outR, errR *os.File
	readers    sync.WaitGroup
	progress   drainProgress
	exited     chan struct{} // closed once the shell has exited (not reaped)
	started    time.Time
}

// start opens the output pipes, starts the shell (or c.Args's program) as
// the leader of a new group and starts copying its output to c's writers.
// A program that cannot be found or run is a *notRun error.
func start(c Command) (*running, error) {
	env := environ(os.Environ(), c.Env)
	var cmd *exec.Cmd
	if len(c.Args) > 0 {
		path, nr := findProgram(c.Args[0], c.Dir, pathOf(env))
		if nr != nil {
			return nil, nr
		}
		cmd = &exec.Cmd{Path: path, Args: c.Args}
	} else {
		cmd = procgroup.Shell(c.Command)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, startError(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, startError(err)
	}
	procgroup.TunePipe(outW, pipeSize)
	procgroup.TunePipe(errW, pipeSize)

	cmd.Dir = c.Dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = outW, errW
	switch {
	case c.StdinFile != nil:
		cmd.Stdin = c.StdinFile // an *os.File: passed on, not copied
	case c.Stdin != "":
		cmd.Stdin = strings.NewReader(c.Stdin)
	}
	// Stdin is copied by os/exec: never wait long for that copy once the
	// group is gone.
	cmd.WaitDelay = drainDelay

	r := &running{cmd: cmd, outR: outR, errR: errR, exited: make(chan struct{}), started: time.Now()}
	r.group, err = procgroup.Start(cmd)
	outW.Close() // the child has its own copies: EOF comes when the last holder exits
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		if len(c.Args) > 0 {
			if nr := cannotStart(c.Args[0], err); nr != nil {
				return nil, nr
			}
		}
		return nil, startError(err)
	}
	r.readers.Add(2)
	go pump(&r.readers, &r.progress, outR, c.Stdout, 0, c.Gather)
	go pump(&r.readers, &r.progress, errR, c.Stderr, 1, c.Gather)
	go func() {
		r.group.WaitExited()
		close(r.exited)
	}()
	return r, nil
}

// await waits for the shell to exit, or stops the group when the timeout
// passes (timedOut) or ctx ends (ctxErr). It returns once the shell has
// exited.
func (r *running) await(ctx context.Context, timeout, grace time.Duration) (timedOut bool, ctxErr error) {
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-r.exited:
	case <-expired:
		timedOut = true
		r.stop(grace, nil)
	case <-ctx.Done():
		ctxErr = ctx.Err()
		r.stop(grace, interruptSignal(ctx))
	}
	return timedOut, ctxErr
}

// interruptSignal is the signal that interrupted ctx's owner, when ctx's
// cause says so (see Run), else nil.
func interruptSignal(ctx context.Context) os.Signal {
	var s interface{ Signal() os.Signal }
	if errors.As(context.Cause(ctx), &s) {
		return s.Signal()
	}
	return nil
}

// stop asks the group to end (with sig when not nil, else SIGTERM), then
// ends it at once if the shell has not exited within grace, and returns
// once it has exited.
func (r *running) stop(grace time.Duration, sig os.Signal) {
	if sig != nil {
		r.group.Interrupt(sig)
	} else {
		r.group.Terminate()
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-r.exited:
	case <-t.C:
		r.group.Kill()
		<-r.exited
	}
}

// cleanUp ends whatever is left of the group, reads the output that is
// still coming until it stays silent for drainDelay (or for at most
// drainLimit), and reaps the shell.
func (r *running) cleanUp() {
	// The shell has exited but is not reaped yet, so its id still names
	// this group and no other: end whatever of the group is left.
	r.group.Kill()

	drained := make(chan struct{})
	go func() {
		r.readers.Wait()
		close(drained)
	}()
	limit := time.Now().Add(drainLimit)
	tick := time.NewTicker(drainDelay)
	defer tick.Stop()
	last := r.progress.reads.Load()
wait:
	for {
		select {
		case <-drained:
			break wait
		case now := <-tick.C:
			// A pump that read or wrote since the last tick is still
			// draining what the group left in the pipe (or busy storing
			// it): never cut that short. Silence, or output without end,
			// means processes outside the group hold the pipes.
			if p := r.progress.reads.Load(); (p != last || r.progress.writing.Load() > 0) && now.Before(limit) {
				last = p
				continue
			}
			r.outR.SetReadDeadline(time.Now())
			r.errR.SetReadDeadline(time.Now())
			<-drained
			break wait
		}
	}
	r.outR.Close()
	r.errR.Close()
	r.cmd.Wait() // reaps the shell; its status is in cmd.ProcessState
}

// check rejects what would make the command fail to start, with a clear
// error, before anything is started.
func check(c Command) error {
	if len(c.Args) > 0 {
		if err := checkArgs(c); err != nil {
			return err
		}
	} else if strings.TrimSpace(c.Command) == "" {
		return &Error{Op: "command", Err: ErrCommand, Detail: "the command is empty", Hint: `give a shell command line, such as "ls -l"`}
	}
	if len(c.Args) == 0 && strings.IndexByte(c.Command, 0) >= 0 {
		return &Error{Op: "command", Err: ErrCommand, Detail: "the command contains a NUL byte", Hint: "remove it: a shell command line cannot hold NUL bytes"}
	}
	if c.Stdin != "" && c.StdinFile != nil {
		return &Error{Op: "stdin", Err: ErrCommand, Detail: "both Stdin and StdinFile are given", Hint: "give the input as a string in Stdin or as a file in StdinFile, not both"}
	}
	if c.StdinFile != nil {
		if _, err := c.StdinFile.Stat(); errors.Is(err, os.ErrClosed) {
			return &Error{Op: "stdin", Err: ErrCommand, Detail: "StdinFile is closed", Hint: "close the file after the command has run, not before", Cause: err}
		}
	}
	if c.Timeout < 0 {
		return &Error{Op: "timeout", Err: ErrTimeout, Detail: fmt.Sprintf("%v is negative", c.Timeout), Hint: "give a positive duration, or 0 for none"}
	}
	if c.Dir != "" {
		fi, err := os.Stat(c.Dir)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return &Error{Op: "cwd", Err: ErrDir, Detail: fmt.Sprintf("%q does not exist", c.Dir), Hint: `give an existing directory, or "" for the current one`, Cause: err}
		case err != nil:
			return &Error{Op: "cwd", Err: ErrDir, Detail: err.Error(), Hint: "give a directory this process can enter", Cause: err}
		case !fi.IsDir():
			return &Error{Op: "cwd", Err: ErrDir, Detail: fmt.Sprintf("%q is not a directory", c.Dir), Hint: "give a directory, not a file"}
		}
	}
	for _, k := range slices.Sorted(mapKeys(c.Env)) {
		v := c.Env[k]
		switch {
		case k == "":
			return &Error{Op: "env", Err: ErrEnv, Detail: "an empty name", Hint: "names are non-empty, such as PATH"}
		case strings.ContainsAny(k, "=\x00"):
			return &Error{Op: "env", Err: ErrEnv, Detail: fmt.Sprintf("the name %q contains '=' or a NUL byte", k), Hint: "a name cannot hold '=' or NUL; put the value in the value"}
		case strings.IndexByte(v, 0) >= 0:
			return &Error{Op: "env", Err: ErrEnv, Detail: fmt.Sprintf("the value of %s contains a NUL byte", k), Hint: "values cannot hold NUL bytes"}
		}
	}
	return nil
}

// checkArgs checks an argument vector: a program name, no NUL byte, and no
// command line beside it.
func checkArgs(c Command) error {
	if c.Command != "" {
		return &Error{Op: "command", Err: ErrCommand, Detail: "both Command and Args are given", Hint: "give a shell command line in Command or an argument vector in Args, not both"}
	}
	if c.Args[0] == "" {
		return &Error{Op: "command", Err: ErrCommand, Detail: "the program name, Args[0], is empty", Hint: `name the program to run first, such as "ls"`}
	}
	for i, a := range c.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return &Error{Op: "command", Err: ErrCommand, Detail: fmt.Sprintf("argument %d contains a NUL byte", i), Hint: "remove it: a program's arguments cannot hold NUL bytes"}
		}
	}
	return nil
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func startError(err error) error {
	return &Error{Op: "start", Err: ErrStart, Detail: err.Error(), Hint: "check that " + procgroup.ShellName + " (or the program) exists and the working directory can be entered", Cause: err}
}

// environ returns base with the variables of add set, replacing any of the
// same name, in a stable order.
func environ(base []string, add map[string]string) []string {
	if len(add) == 0 {
		return base
	}
	env := make([]string, 0, len(base)+len(add))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := add[name]; !ok {
			env = append(env, kv)
		}
	}
	for _, k := range slices.Sorted(mapKeys(add)) {
		env = append(env, k+"="+add[k])
	}
	return env
}

// drainProgress is what the pumps tell cleanUp: reads counts their reads,
// writing how many are storing what they read.
type drainProgress struct {
	reads   atomic.Int64
	writing atomic.Int32
	cut     atomic.Bool // a pipe was closed by its read deadline, not at its end
	// given counts the bytes read from stdout and from stderr, so that a
	// pump knows whether the other stream is writing (see pump).
	given [2]atomic.Int64
}

// pump copies r, stream 0 (stdout) or 1 (stderr), to w until r ends or
// its read deadline passes. Once w fails it keeps reading and discards, so
// that the command never blocks on a full pipe. With gather, it pauses
// after short reads of a fast writer (see Command.Gather), unless the
// other stream has given bytes since its last short read: while both
// write, each is read as it comes, so that the merged copy keeps their
// order as finely as before.
func pump(wg *sync.WaitGroup, progress *drainProgress, r *os.File, w io.Writer, stream int, gather bool) {
	defer wg.Done()
	if w == nil {
		w = io.Discard
	}
	buf := make([]byte, readBuffer)
	var read int64
	other := &progress.given[1-stream]
	otherSeen := other.Load()
	for {
		n, err := r.Read(buf)
		progress.reads.Add(1)
		progress.given[stream].Add(int64(n))
		read += int64(n)
		if n > 0 && w != io.Discard {
			progress.writing.Add(1)
			_, werr := w.Write(buf[:n])
			progress.writing.Add(-1)
			if werr != nil {
				w = io.Discard
			}
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				progress.cut.Store(true)
			}
			return
		}
		if gather && n < readBuffer/4 && read > gatherAfter {
			if o := other.Load(); o != otherSeen {
				otherSeen = o // the other stream writes too: no pause
			} else {
				pause(gatherPause)
			}
		}
	}
}
