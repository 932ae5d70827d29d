//go:build race

package scrollback_test

// raceEnabled: the race detector's shadow memory inflates a Code Mode
// worker's data segment several times over, so that the server's watch,
// not the worker's own, stops a runaway script, and without its line.
const raceEnabled = true
