package scrollback_test

import (
	"os"
	"testing"

	"github.com/scrollback-dev/scrollback/codemode"
)

// testWorkers runs scripts in worker processes of this test binary, for
// the tests that run Code Mode both ways.
var testWorkers *codemode.Pool

// TestMain lets the test binary serve as a Code Mode worker when a pool
// starts it, and makes the pool the worker tests share.
func TestMain(m *testing.M) {
	codemode.WorkerMain()
	skipOnWindows(shTests)
	testWorkers = codemode.NewPool(codemode.PoolOptions{Size: 2, QuerySize: 1})
	code := m.Run()
	testWorkers.Close()
	os.Exit(code)
}
