package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"time"

	"al.essio.dev/pkg/shellescape"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/preview"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

func init() {
	register(commandInfo{name: "run", order: 10,
		usage:   "run [--session ID] [--timeout DUR] [--cwd DIR] [--env K=V] [--stdin FILE] [--head-bytes N] [--tail-bytes N] [--shell] [--no-progress] [--json] -- PROGRAM ARG... | -- 'COMMAND LINE'",
		summary: "run a command; print its preview and exit with its exit code",
		about: `Two or more arguments after -- run as they are, as exec would: the first
names the program (found on PATH), and every argument reaches it whole,
spaces, quotes and $ included; no shell is involved. A program that is not
found exits 127, one that cannot be run 126. Exactly one argument is a shell
command line, run by /bin/sh -c, so pipelines, redirections, globs and
variables work: quote it whole. --shell runs several arguments through
/bin/sh -c too, each quoted so that the shell sees the same words (for a
builtin such as exit or cd).

While the command runs, its output is captured, not shown: when stderr is
a terminal, one status line there says how long it has run, how much it has
written and its latest line (after a second; erased before the preview is
printed; --no-progress turns it off).

The command's standard input is scrollback's when that is a pipe or a file
(echo x | scrollback run -- cat prints x), else empty: a terminal is not
passed on, as the command runs in a process group of its own.

On Windows one argument runs with cmd.exe /d /s /c, two or more run the
program directly (its arguments quoted by Go's rules), and --shell takes one
argument only.

The exit status is the command's own; 124 after --timeout (as timeout(1)
gives); 128+N when signal N killed it, or when scrollback got signal N
(SIGINT, SIGTERM, SIGHUP or SIGQUIT; Ctrl-C: 130): it passes N on to the
command's process group, as a terminal would, ends what is left of it 2s
later, and saves what it wrote. A timeout, a signal or an interruption is
said on stderr in one line, with --json too (stdout then holds only the
JSON). When scrollback fails before the command starts (a --cwd that is not
a directory, an --stdin it cannot read), it says why and exits 125, as
timeout(1) does.

When the database cannot take the copy (locked past its busy timeout,
full, read-only, not opened), the command still runs and exits with its
own status, and its whole output is kept in a file of the temporary
directory ($TMPDIR), named on stderr.`,
		examples: []example{
			{"run a program with its arguments as they are; a long output is previewed and retained", "scrollback run -- go test -run 'TestX|TestY' ./..."},
			{"one argument is a shell command line: a pipeline, a redirection", "scrollback run -- 'make build 2>&1 | grep -v ^warning'"},
			{"show only the end of the output, and stop after 5 minutes", "scrollback run --head-bytes 0 --timeout 5m -- make build"},
		},
		make: func(io IO) command { return &runCmd{base: base{io: io}} }})
}

// runPageCacheKiB is the page cache of `scrollback run`'s connections: 64
// pages of 4 KiB, room for the B-tree pages an insert walks, while a
// copy's overflow pages pass through. 2026-12-05, saving 100 MiB of random
// bytes (bench/capture): 3,893 page faults with SQLite's default of
// 2,000 KiB, 2,421 with this and the capture buffer aligned to huge
// pages, 3,339 with the alignment alone; 64 KiB and 128 KiB timed alike
// within the noise.
const runPageCacheKiB = 256

// runCmd is `scrollback run`: run a command, print its preview, exit with
// its exit code.
type runCmd struct {
	base
	timeout time.Duration
	cwd     string
	stdin   string
	env     envFlag
	shell   bool
	// noProgress turns off the status line a terminal gets (progress).
	noProgress bool
	// unsavedDir is where an output the database did not take is kept
	// ("": the temporary directory; see keptStore).
	unsavedDir string
}

// envFlag collects repeated --env KEY=VALUE flags.
type envFlag map[string]string

func (e envFlag) String() string { return "" }

func (e envFlag) wants() (string, string) { return "NAME=VALUE", "DEBUG=1" }

func (e envFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want KEY=VALUE, got %q", v)
	}
	e[k] = val
	return nil
}

func (c *runCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("run", true, true)
	fs.DurationVar(&c.timeout, "timeout", 0, "kill the command's process group after `DUR` (e.g. 30s, 5m; default none)")
	fs.StringVar(&c.cwd, "cwd", "", "run the command in the directory `DIR` (default the current directory)")
	fs.StringVar(&c.stdin, "stdin", "", "give the command the contents of `FILE` on standard input, read first, at most 8 MiB (- for scrollback's own stdin; default: scrollback's stdin passed on as it is when that is a pipe or a file, else none)")
	c.env = envFlag{}
	fs.Var(c.env, "env", "set `NAME=VALUE` in the command's environment (repeatable; default: scrollback's environment as it is)")
	// The defaults are the preview package's split of what the engine
	// shows once it retains a copy (scrollback.ShownBudget): the footer
	// gets its room first, head and tail share the rest 3:2.
	head := fs.Int("head-bytes", -1, fmt.Sprintf("when the output does not fit, show `N` bytes of its start, 0 for none (default %d beside a short footer: 3/5 of what the footer leaves of %d bytes; with --tail-bytes, what that leaves of their share)", preview.ShownHead, scrollback.ShownBudget))
	tail := fs.Int("tail-bytes", -1, fmt.Sprintf("when the output does not fit, show `N` bytes of its end, 0 for none (default %d beside a short footer: 2/5 of what the footer leaves of %d bytes; with --head-bytes, what that leaves of their share)", preview.ShownTail, scrollback.ShownBudget))
	fs.BoolVar(&c.noProgress, "no-progress", false, "do not show the status line (time, bytes, lines, the latest line) that a terminal's stderr gets while the command runs (default: shown when stderr is a terminal)")
	c.addRetentionFlag(fs)
	fs.BoolVar(&c.shell, "shell", false, "run two or more arguments as one /bin/sh -c command line, each quoted for the shell (default: run them as they are, without a shell; one argument is always a shell command line)")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("no command given: put it after --, e.g. scrollback run -- make test")
	}
	if len(runSignals) > 0 {
		var stop context.CancelFunc
		ctx, stop = SignalContext(ctx, runSignals...)
		defer stop()
	}
	if c.timeout < 0 {
		return badFlag("timeout", "a duration of 0 (none) or more", "30s or 2m", c.timeout)
	}
	// Checked before the command runs, as the quotas are: a period that
	// is not one is a mistake in how scrollback was called.
	retention, err := c.retentionPeriod(c.io.Getenv)
	if err != nil {
		return err
	}
	in := scrollback.RunCommandInput{
		Cwd:       c.cwd,
		TimeoutMS: c.timeout.Milliseconds(),
		Env:       c.env,
	}
	switch {
	case len(pos) == 1:
		in.Command = pos[0]
	case c.shell:
		if in.Command, err = shellLine(runtime.GOOS, pos); err != nil {
			return err
		}
	default:
		in.Args = pos
	}
	if *head >= 0 || *tail >= 0 {
		in.Preview = &scrollback.PreviewShape{}
		if *head >= 0 {
			in.Preview.HeadBytes = head
		}
		if *tail >= 0 {
			in.Preview.TailBytes = tail
		}
	}
	if c.timeout > 0 && in.TimeoutMS == 0 {
		in.TimeoutMS = 1
	}
	if c.stdin != "" {
		data, err := readStdin(c.stdin, c.io.Stdin)
		if err != nil {
			return notStarted(err)
		}
		in.Stdin = data
	} else {
		in.StdinFile = passedStdin(c.io.Stdin)
	}

	// A run's process is short-lived: it leaves the write-ahead log for
	// the next one to copy into the file (sqlite.Options.LeaveLog), so that
	// its exit does not wait for the disk, and it saves one copy with a
	// small page cache (sqlite.Options.PageCacheKiB), whose pages it
	// reuses instead of faulting in 2 MB of fresh ones.
	st, err := c.openStoreWith(ctx, sqlite.Options{LeaveLog: true, PageCacheKiB: runPageCacheKiB})
	unopened := err != nil // said here once; not again for the copy it cannot save
	var ue usageError
	switch {
	case errors.As(err, &ue):
		// A setting that is not one (a quota of 12XB) is a mistake in
		// how scrollback was called, like a bad flag: nothing runs.
		return err
	case err != nil:
		// No database: the command still runs and its result is shown;
		// only the retained copy is lost, and the result says so.
		fmt.Fprintf(c.io.Stderr, "scrollback run: %v; running without a retained copy\n", err)
		st = unsavedStore{err}
	}
	defer st.Close()
	opened := st // the database itself, for retention (nil: none opened)
	if unopened {
		opened = nil
	}
	var prog *progress
	if !c.noProgress {
		prog = newProgress(c.io.Stderr, c.io.Getenv)
	}
	defer prog.stop()
	st, kept := keepUnsaved(st, c.unsavedDir, prog.before(c.io.Stderr))
	// The process ends with the command: its capture buffer may take
	// huge pages (capture.Limits.HugePages), and the readers of its
	// output may pause for a fast writer (Options.GatherOutput).
	opts := c.engineOptions()
	opts.Capture.HugePages = true
	opts.GatherOutput = true
	eng := scrollback.New(st, opts)
	sess, err := c.openSession(ctx, eng, false)
	if err != nil {
		return notStarted(err)
	}
	if prog != nil {
		in.Output = prog
		prog.run()
	}
	res, err := sess.RunCommand(ctx, in)
	prog.stop()
	if err != nil && res.Recovery == "" {
		if sig, ok := interruptedBy(ctx); ok && osSignalNumber(sig) != 0 {
			// Interrupted before the command started: nothing ran.
			code := 128 + osSignalNumber(sig)
			fmt.Fprintf(c.io.Stderr, "scrollback run: interrupted by %s before the command started; exit status %d\n", signalName(sig), code)
			return exitError{code}
		}
		return notStarted(err)
	}
	// The command ran. An error now means scrollback was interrupted
	// (ctx ended) and stopped it: that is said below, and the result is
	// still shown.
	interrupted := err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err())
	if err != nil && !interrupted {
		return err
	}
	if c.json {
		if err := printJSON(c.io.Stdout, res); err != nil {
			return err
		}
	} else {
		io.WriteString(c.io.Stdout, res.Preview)
		if res.Preview != "" && !strings.HasSuffix(res.Preview, "\n") {
			io.WriteString(c.io.Stdout, "\n")
		}
		if res.Recovery == scrollback.RecoveryUnavailable && !unopened {
			fmt.Fprintf(c.io.Stderr, "scrollback run: %s\n", res.RecoveryError)
		}
		if !res.Truncated && !res.Complete {
			fmt.Fprintf(c.io.Stderr, "scrollback run: %s\n", present.OutputHeldOpen)
		}
	}
	if note := kept.note(); note != "" && res.Recovery == scrollback.RecoveryUnavailable {
		fmt.Fprintf(c.io.Stderr, "scrollback run: the retained copy was not saved; %s\n", note)
	}
	var stop *runStop
	if interrupted {
		stop = &runStop{}
		stop.signal, stop.bySignal = interruptedBy(ctx)
	}
	code := exitCode(res, stop)
	if note := endNote(res, c.timeout, stop, code); note != "" {
		fmt.Fprintf(c.io.Stderr, "scrollback run: %s\n", note)
	}
	// The command's work is done and shown: apply retention, when a pass
	// is due, for whoever runs no server. It never fails the command
	// (see retainAfter for why its errors are ignored).
	if opened != nil && !interrupted {
		retainAfter(ctx, opened, retention, []string{sess.ID()})
	}
	return exitError{code}
}

// runNotStarted is run's exit status when it fails before its command
// starts (a --cwd that is not a directory, an unreadable --stdin, a
// session it cannot open): 125, as timeout(1) and env(1) give for their
// own failures, apart from the command's statuses (126 and 127 stay a
// program that cannot run or is not found, as a shell gives them).
const runNotStarted = 125

func notStarted(err error) error { return statusError{runNotStarted, err} }

// shellLine joins args into one command line for goos's shell that runs
// them as the same words: each quoted for a POSIX shell where it needs it
// (al.essio.dev/pkg/shellescape), and the first always when it would read
// as an assignment (A=1) or a reserved word (if, !, {), which a shell
// would not run as a program. cmd.exe has no quoting that keeps every
// argument whole, so on Windows several arguments are a usage error.
func shellLine(goos string, args []string) (string, error) {
	if goos == "windows" {
		return "", usagef("--shell takes one argument on Windows, the whole cmd.exe command line: cmd.exe has no quoting that keeps several arguments whole (without --shell they run as they are)")
	}
	line := shellescape.QuoteCommand(args)
	if first := shellescape.Quote(args[0]); first == args[0] && (strings.Contains(first, "=") || shellReserved[first]) {
		line = "'" + args[0] + "'" + line[len(first):]
	}
	return line, nil
}

// shellReserved are the words a POSIX shell reads as syntax, not as a
// program's name, when they come first (the ones shellescape leaves
// unquoted; it quotes "!", "{", "}" and the like already).
var shellReserved = map[string]bool{
	"case": true, "do": true, "done": true, "elif": true, "else": true, "esac": true, "fi": true,
	"for": true, "function": true, "if": true, "in": true, "select": true, "then": true, "time": true,
	"until": true, "while": true,
}

// runStop says why scrollback stopped a command before it ended: it was
// interrupted, by signal when bySignal.
type runStop struct {
	signal   os.Signal
	bySignal bool
}

// exitCode maps a command's end to scrollback's exit code: its own code, 124
// for a timeout (as timeout(1) does), 128+N for a signal (as shells do), and
// when scrollback was interrupted by signal N and stopped it, 128+N as a
// shell gives a command that signal interrupted.
func exitCode(r scrollback.RunCommandResult, stop *runStop) int {
	switch {
	case stop != nil && stop.bySignal && osSignalNumber(stop.signal) != 0:
		return 128 + osSignalNumber(stop.signal)
	case r.TimedOut:
		return 124
	case r.ExitCode != nil:
		return *r.ExitCode
	case r.Signal != "":
		if n := signalNumber(r.Signal); n != 0 {
			return 128 + n
		}
	}
	return 1
}

// endNote is the one line run says on stderr when a command did not simply
// exit: a timeout, a signal, or scrollback interrupted; what happened,
// after how long, and the exit status scrollback gives. "" when the command
// exited by itself, whatever its status.
func endNote(r scrollback.RunCommandResult, timeout time.Duration, stop *runStop, code int) string {
	took := (time.Duration(r.DurationMS) * time.Millisecond).String()
	ended := "it exited with status " + fmt.Sprint(deref(r.ExitCode))
	if r.Signal != "" {
		ended = "it was killed by " + r.Signal
	}
	switch {
	case stop != nil:
		by := ""
		if stop.bySignal {
			by = " by " + signalName(stop.signal)
		}
		return fmt.Sprintf("interrupted%s after %s: stopped the command's process group (%s); exit status %d", by, took, ended, code)
	case r.TimedOut:
		return fmt.Sprintf("timed out after %s (--timeout %s): stopped the command's process group (%s); exit status %d", took, timeout, ended, code)
	case r.Signal != "":
		return fmt.Sprintf("the command was killed by signal %s after %s; exit status %d", r.Signal, took, code)
	}
	return ""
}

func deref(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// passedStdin is scrollback's stdin when run passes it on to the command
// without --stdin, as time and nohup do: when it is a pipe or a file
// (`echo x | scrollback run -- cat` prints x). A terminal is not: the
// command runs in a process group of its own, which a terminal stops when
// it reads (SIGTTIN), so it gets no input, as from /dev/null (nil).
func passedStdin(stdin io.Reader) *os.File {
	f, ok := stdin.(*os.File)
	if !ok || f == nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice != 0 {
		return nil
	}
	return f
}

const maxStdin = 8 << 20

// readStdin reads the --stdin source, refusing more than 8 MiB: the command
// gets it as one string.
func readStdin(name string, stdin io.Reader) (string, error) {
	var r io.Reader = stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", fmt.Errorf("--stdin: %w", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxStdin+1))
	if err != nil {
		return "", fmt.Errorf("--stdin: %w", err)
	}
	if len(data) > maxStdin {
		return "", fmt.Errorf("--stdin: more than %d bytes; pipe large input through the command itself (e.g. run -- 'cmd < FILE')", maxStdin)
	}
	return string(data), nil
}
