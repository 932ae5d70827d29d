//go:build !unix

package sqlite_test

// processCPU is not measured here: benchmarks report the wall clock only.
func processCPU() int64 { return 0 }

// minorFaults is not measured here.
func minorFaults() int64 { return 0 }
