package scrollback_test

import (
	"flag"
	"os"
	"runtime"
	"strings"
)

// shTests are the tests and examples whose commands are sh syntax (seq,
// printf, sleep, head -c, ';'). On Windows run_command runs cmd.exe /d /s
// /c, where they mean something else, so they are skipped there: the
// Windows runner has its own tests (runner/runner_windows_test.go), and
// CI's end-to-end check (scripts/e2e-stdio) runs a command through
// `scrollback run` and `scrollback mcp` on each platform. Examples cannot
// call t.Skip, hence a -test.skip pattern rather than a skip in each test.
var shTests = []string{
	"TestRunCommand.*",
	"TestEngineSessions",
	"TestConcurrentSessions",
	"TestRunCodeSecondID",
	"TestRunCodeSmallResults",
	"Example",
	"ExampleSession_GrepToolOutput",
	"ExampleSession_GrepToolOutput_count",
	"ExampleSession_ReadToolOutput",
	"ExampleError",
}

// skipOnWindows adds the named tests to -test.skip, saying so, on Windows
// (TestMain calls it).
func skipOnWindows(names []string) {
	if runtime.GOOS != "windows" {
		return
	}
	f := flag.Lookup("test.skip")
	if f == nil {
		return
	}
	pattern := "^(" + strings.Join(names, "|") + ")$"
	if cur := f.Value.String(); cur != "" {
		pattern = cur + "|" + pattern
	}
	flag.Set("test.skip", pattern)
	os.Stderr.WriteString("skipped on Windows, their commands are sh syntax: " + strings.Join(names, ", ") + "\n")
}
