package cli

import "os"

// runSignals: Windows sends a console process none besides Ctrl-C's.
var runSignals []os.Signal

// signalNumber returns the number a Unix shell would give the signal named
// name. Windows has no signals: the runner reports "SIGKILL" for a command
// it ended, and that is the only name it gives.
func signalNumber(name string) int {
	if name == "SIGKILL" {
		return 9
	}
	return 0
}
