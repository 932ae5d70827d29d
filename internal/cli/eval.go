package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"
)

// evalBinary is the harness's own binary: the model SDKs it links stay out
// of scrollback's.
const evalBinary = "scrollback-eval"

// evalInstall says in one line how to install the harness.
const evalInstall = "the eval harness is a separate binary, " + evalBinary + ", which is not installed; install it with: go install github.com/scrollback-dev/scrollback/cmd/scrollback-eval@latest"

func init() {
	register(commandInfo{name: "eval", order: 90, passthrough: true,
		usage:   "eval [ARGS...]   (runs scrollback-eval ARGS...)",
		summary: "measure whether a model answers right through scrollback, beside the spill and truncate baselines (runs the separate scrollback-eval binary)",
		about: `The harness and its model SDKs are a binary of their own, scrollback-eval, so that
scrollback itself stays small. scrollback eval runs it with the same arguments and exits
with its status, when it is installed beside scrollback (the same directory) or on PATH;
otherwise it says how to install it:

  go install github.com/scrollback-dev/scrollback/cmd/scrollback-eval@latest

scrollback-eval --help lists its flags; docs/eval.md says what it measures.`,
		examples: []example{
			{"the suite against a local model, in the three modes", "scrollback eval --base-url http://localhost:11434/v1 --model qwen2.5:14b"},
			{"the harness's own flags", "scrollback eval --help"},
		},
		make: func(io IO) command { return &evalCmd{io: io} }})
}

// evalCmd is `scrollback eval`: it runs scrollback-eval.
type evalCmd struct{ io IO }

func (c *evalCmd) Run(ctx context.Context, args []string) error {
	bin, err := findEval()
	if err != nil {
		fmt.Fprintf(c.io.Stderr, "scrollback eval: %s\n", evalInstall)
		return exitError{1}
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.io.Stdin, c.io.Stdout, c.io.Stderr
	// A stop (Ctrl-C, SIGTERM) reaches the harness as an interrupt, so
	// that it ends its run as it would alone.
	cmd.Cancel = func() error {
		if runtime.GOOS == "windows" {
			return cmd.Process.Kill()
		}
		return cmd.Process.Signal(os.Interrupt)
	}
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee):
		code := ee.ExitCode()
		if code < 0 {
			code = 1 // ended by a signal
		}
		return exitError{code}
	}
	return fmt.Errorf("running %s: %w", bin, err)
}

// findEval finds scrollback-eval beside the running scrollback binary, else
// on PATH.
func findEval() (string, error) {
	name := evalBinary
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return exec.LookPath(evalBinary)
}
