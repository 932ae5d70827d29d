package cli

import (
	"flag"
	"io"
	"log/slog"

	"github.com/scrollback-dev/scrollback/codemode"
)

// defaultCodeWorkers is how many Code Mode workers `mcp` and `proxy` keep
// ready.
const defaultCodeWorkers = 2

// codeWorkers is the --code-workers flag of `mcp`, `proxy` and `code`: how
// run_code's scripts run.
type codeWorkers struct{ n int }

func (w *codeWorkers) addFlag(fs *flag.FlagSet, oneScript bool) {
	if oneScript {
		fs.IntVar(&w.n, "code-workers", defaultCodeWorkers, "run the script in a worker process under the operating system's limits and sandbox (any `N` above 0), or in this process (0) (default 2)")
		return
	}
	fs.IntVar(&w.n, "code-workers", defaultCodeWorkers, "run each run_code script and query_tool_output filter in a worker process of its own, under the operating system's limits and sandbox, keeping `N` started and ready; 0 runs them in this process, without them (default 2)")
}

func (w *codeWorkers) check() error {
	if w.n < 0 {
		return usagef("--code-workers %d: give 0 (scripts run in this process) or more", w.n)
	}
	return nil
}

// pool starts the workers: nil (scripts in this process) for 0. ready is
// how many to keep ready (0: each script starts its own). Sandbox layers
// the workers lack on this machine are logged to log once, when the first
// worker has started.
func (w *codeWorkers) pool(log *slog.Logger, ready int) *codemode.Pool {
	if w.n == 0 {
		return nil
	}
	return codemode.NewPool(codemode.PoolOptions{Size: ready, Logger: log})
}

// warnLogger logs warnings and errors to stderr as text.
func warnLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
