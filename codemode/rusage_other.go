//go:build !unix

package codemode

import "os"

// peakRSS is 0 where the process's peak is not reported.
func peakRSS(*os.ProcessState) int64 { return 0 }
