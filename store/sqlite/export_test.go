package sqlite

import "time"

// SetReadFlushEvery sets how old noted reads may grow before they are
// written down in the background, until the returned restore is called.
func SetReadFlushEvery(d time.Duration) (restore func()) {
	old := readFlushEvery
	readFlushEvery = d
	return func() { readFlushEvery = old }
}

// OnWrite calls f with the op of each write transaction begun, until the
// returned restore is called.
func OnWrite(f func(op string)) (restore func()) {
	testHookWrite.Store(&f)
	return func() { testHookWrite.Store(nil) }
}
