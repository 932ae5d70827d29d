//go:build unix

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// runSignals are the signals `scrollback run` takes as an interruption
// besides the process-wide SIGINT and SIGTERM (cmd/scrollback): a closed
// terminal's SIGHUP and Ctrl-\'s SIGQUIT. Left to their default action
// they killed scrollback (SIGQUIT with a goroutine dump) and left the
// command, in a process group of its own, running without it, its copy
// never saved. Only run takes them: the servers re-read their tokens on
// SIGHUP.
var runSignals = []os.Signal{unix.SIGHUP, unix.SIGQUIT}

// signalNumber returns the number of the signal named name ("SIGTERM"), or
// 0 when the platform has no such signal.
func signalNumber(name string) int { return int(unix.SignalNum(name)) }
