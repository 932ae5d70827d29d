// Command scrollback runs commands, reads files and pages through retained
// copies of large tool output from a shell, and serves the same tools over
// MCP. Run `scrollback help` for the subcommands.
package main

import (
	"context"
	"os"
	"syscall"

	"github.com/scrollback-dev/scrollback/internal/cli"
)

func main() {
	ctx, stop := cli.SignalContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Stdio())
	stop()
	os.Exit(code)
}
