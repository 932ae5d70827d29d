//go:build unix

package cli

import "golang.org/x/sys/unix"

// signalNumber returns the number of the signal named name ("SIGTERM"), or
// 0 when the platform has no such signal.
func signalNumber(name string) int { return int(unix.SignalNum(name)) }
