//go:build race

package sandbox

// raceDetector: this binary runs under the race detector, whose
// ThreadSanitizer maps shadow memory beside every heap mapping; under
// RLIMIT_DATA those mappings fail and the worker aborts ("ThreadSanitizer
// failed to allocate"), so a race build sets no data limit and relies on
// the worker's own watch and the server's.
const raceDetector = true
