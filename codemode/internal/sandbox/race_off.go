//go:build !race

package sandbox

// raceDetector: see race_on.go.
const raceDetector = false
