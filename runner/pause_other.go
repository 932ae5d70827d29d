//go:build !linux

package runner

import "time"

// pause does nothing here: Command.Gather pauses on Linux only.
func pause(time.Duration) {}
