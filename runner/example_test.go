//go:build unix

package runner_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/scrollback-dev/scrollback/runner"
)

func ExampleRun() {
	r, err := runner.Run(context.Background(), runner.Command{
		Command: `echo "hello, $NAME"; exit 3`,
		Env:     map[string]string{"NAME": "world"},
		Stdout:  os.Stdout,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("exit code:", *r.ExitCode)
	// Output:
	// hello, world
	// exit code: 3
}

// A timeout stops the whole process group, background jobs included.
func ExampleRun_timeout() {
	r, _ := runner.Run(context.Background(), runner.Command{
		Command: "sleep 60 & sleep 60",
		Timeout: 100 * time.Millisecond,
	})
	fmt.Println(r.TimedOut, r.Signal, r.ExitCode == nil)
	// Output:
	// true SIGTERM true
}

func ExampleRun_missingDirectory() {
	_, err := runner.Run(context.Background(), runner.Command{Command: "ls", Dir: "/no/such/dir"})
	fmt.Println(err)
	// Output:
	// runner: invalid working directory: "/no/such/dir" does not exist (give an existing directory, or "" for the current one)
}

// Args runs a program with exactly these arguments, without a shell: the
// space and the $ reach printf as they are.
func ExampleRun_args() {
	r, _ := runner.Run(context.Background(), runner.Command{
		Args:   []string{"printf", "%s|", "a b", "$HOME"},
		Stdout: os.Stdout,
	})
	fmt.Println()
	fmt.Println("exit code:", *r.ExitCode)
	// Output:
	// a b|$HOME|
	// exit code: 0
}
