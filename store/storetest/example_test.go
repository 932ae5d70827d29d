package storetest_test

import (
	"testing"

	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/storetest"
)

// A backend's conformance test: Run calls the function once per subtest for
// a fresh, empty store, which the function arranges to close.
func ExampleRun() {
	// In a backend's _test.go file:
	_ = func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) store.Store {
			s := newMemStore() // e.g. sqlite.Open(filepath.Join(t.TempDir(), "test.db"), nil)
			t.Cleanup(func() { s.Close() })
			return s
		})
	}
	// (No output: Run needs the *testing.T of a real test.)
}
