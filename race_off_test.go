//go:build !race

package scrollback_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
