//go:build !unix

package main

import "os"

// peakRSS is 0 where getrusage's peak is not available (Windows): the
// bench's memory column then reads 0 and its bound check cannot fail on it.
func peakRSS(*os.ProcessState) int64 { return 0 }
