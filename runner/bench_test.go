//go:build unix

package runner

import (
	"context"
	"io"
	"testing"
)

// BenchmarkRunStart measures the fixed cost of running a trivial command:
// process group, pipes, the shell, the final group kill.
func BenchmarkRunStart(b *testing.B) {
	for b.Loop() {
		if _, err := Run(context.Background(), Command{Command: "true"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunThroughput measures reading 64 MiB of output through the pipes.
func BenchmarkRunThroughput(b *testing.B) {
	b.SetBytes(64 << 20)
	for b.Loop() {
		if _, err := Run(context.Background(), Command{Command: "head -c 67108864 /dev/zero", Stdout: io.Discard}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunStartArgs is BenchmarkRunStart for an argument vector: the
// program found on PATH and started without a shell. Compare the two in
// one run: the argument vector saves the shell's start.
func BenchmarkRunStartArgs(b *testing.B) {
	for b.Loop() {
		if _, err := Run(context.Background(), Command{Args: []string{"true"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRunStartArgsNotFound is the cost of a program that is not on
// PATH: every entry is looked at, and nothing is started.
func BenchmarkRunStartArgsNotFound(b *testing.B) {
	for b.Loop() {
		if _, err := Run(context.Background(), Command{Args: []string{"no-such-program-scrollback"}}); err != nil {
			b.Fatal(err)
		}
	}
}
