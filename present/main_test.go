package present_test

import (
	"os"
	"testing"

	"github.com/scrollback-dev/scrollback/codemode"
)

// TestMain lets the test binary serve as a Code Mode worker: the CLI's
// `scrollback code` in cli.golden runs its script in a worker process
// started from this binary.
func TestMain(m *testing.M) {
	codemode.WorkerMain()
	os.Exit(m.Run())
}
