package cli

import (
	"flag"
	"io"
	"log/slog"

	"github.com/scrollback-dev/scrollback/codemode"
)

// defaultCodeWorkers is how many Code Mode workers `mcp` and `proxy` keep
// ready for scripts.
const defaultCodeWorkers = 2

// defaultQueryWorkers is how many light workers `mcp` and `proxy` keep
// ready for query_tool_output's filters, apart from the scripts': one
// is enough for a model's filters one after another, and a light worker
// (no esbuild or goja warm-up) starts in a few milliseconds when a burst
// needs more.
const defaultQueryWorkers = 1

// codeWorkers is the --code-workers flag of `mcp`, `proxy` and `code`: how
// run_code's scripts run; and the servers' --query-workers: how many of
// query_tool_output's light workers are kept ready.
type codeWorkers struct{ n, queries int }

func (w *codeWorkers) addFlag(fs *flag.FlagSet, oneScript bool) {
	if oneScript {
		fs.IntVar(&w.n, "code-workers", defaultCodeWorkers, "run the script in a worker process under the operating system's limits and sandbox (any `N` above 0), or in this process (0) (default 2)")
		return
	}
	fs.IntVar(&w.n, "code-workers", defaultCodeWorkers, "run each run_code script and query_tool_output filter in a worker process of its own, under the operating system's limits and sandbox, keeping `N` started and ready for scripts; 0 runs scripts and filters in this process, without them (default 2)")
	fs.IntVar(&w.queries, "query-workers", defaultQueryWorkers, "keep `N` light worker processes started and ready for query_tool_output's filters, apart from the scripts' (--code-workers), so that neither waits for the other's; 0 starts one per filter (default 1)")
}

func (w *codeWorkers) check() error {
	if w.n < 0 {
		return usagef("--code-workers %d: give 0 (scripts run in this process) or more", w.n)
	}
	if w.queries < 0 {
		return usagef("--query-workers %d: give 0 (each filter starts its worker) or more", w.queries)
	}
	return nil
}

// pool starts the workers: nil (scripts and filters in this process) for
// 0. ready is how many to keep ready for scripts (0: each script starts
// its own); --query-workers light ones are kept for filters. Sandbox
// layers the workers lack on this machine are logged to log once, when
// the first worker has started.
func (w *codeWorkers) pool(log *slog.Logger, ready int) *codemode.Pool {
	if w.n == 0 {
		return nil
	}
	return codemode.NewPool(codemode.PoolOptions{Size: ready, QuerySize: w.queries, Logger: log})
}

// warnLogger logs warnings and errors to stderr as text.
func warnLogger(stderr io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
