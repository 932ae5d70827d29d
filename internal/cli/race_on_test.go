//go:build race

package cli

// raceEnabled: the race detector's build sets no RLIMIT_DATA on a Code Mode
// worker, so a script that bombs memory in one step grows to the bound.
const raceEnabled = true
