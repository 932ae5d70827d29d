package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/scrollback-dev/scrollback"
)

func init() {
	register(commandInfo{name: "run", order: 10,
		usage:   "run [--session ID] [--timeout DUR] [--cwd DIR] [--env K=V] [--stdin FILE] [--head-bytes N] [--tail-bytes N] [--json] -- COMMAND...",
		summary: "run a command; print its preview and exit with its exit code",
		examples: []example{
			{"run the tests; a long output is previewed and retained", "scrollback run -- go test ./..."},
			{"show only the end of the output, and stop after 5 minutes", "scrollback run --head-bytes 0 --timeout 5m -- make build"},
		},
		make: func(io IO) command { return &runCmd{base: base{io: io}} }})
}

// runCmd is `scrollback run`: run a command, print its preview, exit with
// its exit code.
type runCmd struct {
	base
	timeout time.Duration
	cwd     string
	stdin   string
	env     envFlag
}

// envFlag collects repeated --env KEY=VALUE flags.
type envFlag map[string]string

func (e envFlag) String() string { return "" }

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
	fs.StringVar(&c.stdin, "stdin", "", "give the command the contents of `FILE` on standard input (- for scrollback's own stdin; default none)")
	c.env = envFlag{}
	fs.Var(c.env, "env", "set `KEY=VALUE` in the command's environment (repeatable; default: scrollback's environment as it is)")
	head := fs.Int("head-bytes", -1, "when the output does not fit, show `N` bytes of its start, 0 for none (default: what --tail-bytes leaves, else about two thirds of the preview)")
	tail := fs.Int("tail-bytes", -1, "when the output does not fit, show `N` bytes of its end, 0 for none (default: what --head-bytes leaves, else about one third of the preview)")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("no command given: put it after --, e.g. scrollback run -- make test")
	}
	if c.timeout < 0 {
		return usagef("--timeout %s is negative", c.timeout)
	}
	in := scrollback.RunCommandInput{
		Command:   strings.Join(pos, " "),
		Cwd:       c.cwd,
		TimeoutMS: c.timeout.Milliseconds(),
		Env:       c.env,
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
			return err
		}
		in.Stdin = data
	}

	st, err := c.openStore(ctx)
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
	eng := c.newEngine(st)
	sess, err := c.openSession(ctx, eng, false)
	if err != nil {
		return err
	}
	res, err := sess.RunCommand(ctx, in)
	if err != nil && res.Recovery == "" {
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
		if res.Recovery == scrollback.RecoveryUnavailable {
			fmt.Fprintf(c.io.Stderr, "scrollback run: %s\n", res.RecoveryError)
		}
	}
	if err != nil {
		return err
	}
	return exitError{exitCode(res)}
}

// exitCode maps a command's end to scrollback's exit code: its own code, 124
// for a timeout (as timeout(1) does), 128+N for a signal (as shells do).
func exitCode(r scrollback.RunCommandResult) int {
	switch {
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
