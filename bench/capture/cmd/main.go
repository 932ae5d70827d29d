// Command capbench runs one shell command through runner and capture, the
// way `scrollback run` does, and reports what was captured on stderr. It
// stands in for the real binary in bench/capture/run.sh until the CLI
// exists.
//
// Usage:
//
//	capbench 'cat /path/to/file'
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/runner"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: capbench 'shell command'")
		os.Exit(2)
	}
	c := capture.New(capture.Limits{HugePages: true}) // as scrollback run captures
	res, err := runner.Run(context.Background(), runner.Command{
		Command: strings.Join(os.Args[1:], " "),
		Stdout:  c.Stdout(),
		Stderr:  c.Stderr(),
		Gather:  true, // as scrollback run reads
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "capbench:", err)
		os.Exit(1)
	}
	r := c.Result()
	code := -1
	if res.ExitCode != nil {
		code = *res.ExitCode
	}
	fmt.Fprintf(os.Stderr, "capbench: exit %d signal %q stdout %d stderr %d copy %d complete %v duration %v\n",
		code, res.Signal, r.StdoutBytes, r.StderrBytes, len(r.Copy), r.Complete, res.Duration)
}
