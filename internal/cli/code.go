package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/present"
)

func init() {
	register(commandInfo{name: "code", order: 15,
		usage:   "code [--session ID] [--timeout DUR] [--code-workers N] [--json] FILE|-",
		summary: "run TypeScript or JavaScript that calls the tools (Code Mode); print its value, logs and retained copies",
		examples: []example{
			{"run a script that awaits the tools, from a TypeScript or JavaScript file", "scrollback code check.ts"},
			{"run a script from stdin; print its value, logs and copies as JSON", "echo 'return tools.run_command({command: \"make\"}).exit_code' | scrollback code --json -"},
		},
		make: func(io IO) command { return &codeCmd{base: base{io: io}} }})
}

// codeCmd is `scrollback code`: run a Code Mode script from a file or
// standard input. The script's value goes to stdout; its console output,
// the copies made during the run and any script error go to stderr. It
// exits 1 when the script failed.
type codeCmd struct {
	base
	timeout time.Duration
	workers codeWorkers
}

// maxScript bounds the script read from a file or stdin.
const maxScript = 1 << 20

func (c *codeCmd) Run(ctx context.Context, args []string) error {
	fs := c.flags("code", true, true)
	fs.DurationVar(&c.timeout, "timeout", 0, "stop the script after `DUR`, tool calls included (default 30s)")
	c.workers.addFlag(fs, true)
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if err := c.workers.check(); err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("give one script: a FILE, or - for standard input")
	}
	if c.timeout < 0 {
		return badFlag("timeout", "a duration of 0 or more", "30s or 2m", c.timeout)
	}
	code, err := readScript(pos[0], c.io.Stdin)
	if err != nil {
		return err
	}
	// One script: one worker, started for it.
	workers := c.workers.pool(warnLogger(c.io.Stderr), 0)
	defer workers.Close()
	c.codeWorkers = workers
	sess, st, err := c.useSession(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	in := scrollback.RunCodeInput{Code: code, TimeoutMS: c.timeout.Milliseconds()}
	if c.timeout > 0 && in.TimeoutMS == 0 {
		in.TimeoutMS = 1
	}
	res, err := sess.RunCode(ctx, in)
	if err != nil {
		return err
	}
	if c.json {
		if err := printJSON(c.io.Stdout, res); err != nil {
			return err
		}
	} else {
		c.printHuman(res)
	}
	if res.Error != nil {
		return exitError{1}
	}
	return nil
}

func (c *codeCmd) printHuman(res scrollback.RunCodeResult) {
	if res.Logs != "" {
		io.WriteString(c.io.Stderr, res.Logs)
	}
	if res.Preview != "" {
		io.WriteString(c.io.Stdout, res.Preview)
		if !strings.HasSuffix(res.Preview, "\n") {
			io.WriteString(c.io.Stdout, "\n")
		}
	}
	if res.Recovery == scrollback.RecoveryUnavailable {
		fmt.Fprintf(c.io.Stderr, "scrollback code: %s\n", res.RecoveryError)
	}
	io.WriteString(c.io.Stderr, present.Retained(present.CLI(c.session), res.Retained))
	if e := res.Error; e != nil {
		if e.Line > 0 {
			fmt.Fprintf(c.io.Stderr, "scrollback code: line %d, column %d: %s\n", e.Line, e.Column, e.Message)
		} else {
			fmt.Fprintf(c.io.Stderr, "scrollback code: %s\n", e.Message)
		}
	}
}

// readScript reads the script from a file, or from stdin for "-",
// refusing more than maxScript bytes.
func readScript(name string, stdin io.Reader) (string, error) {
	r := stdin
	if name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, maxScript+1))
	if err != nil {
		return "", err
	}
	if len(data) > maxScript {
		return "", fmt.Errorf("the script is over %d bytes; a script calls tools, it need not carry data", maxScript)
	}
	return string(data), nil
}
