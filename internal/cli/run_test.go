//go:build unix

package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback"
)

// shellRun runs line with /bin/sh -c and returns what it printed and its
// exit status.
func shellRun(t *testing.T, line string) (string, int) {
	t.Helper()
	out, err := exec.Command("/bin/sh", "-c", line).Output()
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("sh -c %q: %v", line, err)
	}
	return string(out), 0
}

// FuzzShellLine checks --shell's join: /bin/sh -c of the line shellLine
// makes hands the program exactly the arguments it was given, whatever
// bytes they hold (but NUL, which no argument can).
func FuzzShellLine(f *testing.F) {
	for _, seed := range [][3]string{
		{"a b", "c", ""},
		{"it's", `"q"`, `\`},
		{"$HOME", "`id`", "$(id)"},
		{"*", "~", "#x"},
		{"A=1", "if", "!"},
		{"-n", "\n", "\t "},
		{"é", "\xff\xfe", "{a,b}"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		args := []string{a, b, c}
		for _, s := range args {
			if strings.IndexByte(s, 0) >= 0 {
				t.Skip("an argument cannot hold NUL")
			}
		}
		line, err := shellLine("linux", args)
		if err != nil {
			t.Fatal(err)
		}
		out, code := shellRun(t, `printf '%s\0' `+line)
		if code != 0 {
			t.Fatalf("sh -c of %q: exit %d", line, code)
		}
		got := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
		if strings.Join(got, "\x00") != strings.Join(args, "\x00") {
			t.Fatalf("shellLine(%q) = %q, which sh reads as %q", args, line, got)
		}
	})
}

// The first word of a --shell line runs as a program even when a shell
// would read it as an assignment or a reserved word; Windows refuses
// several arguments.
func TestShellLine(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"printf", "%s|", "a b", "c"}, `printf '%s|' 'a b' c`},
		{[]string{"FOO=bar", "x"}, `'FOO=bar' x`},
		{[]string{"if", "true"}, `'if' true`},
		{[]string{"echo", "A=1", "if"}, `echo A=1 if`},
		{[]string{"exit", "3"}, `exit 3`},
	} {
		got, err := shellLine("linux", tt.args)
		if err != nil || got != tt.want {
			t.Errorf("shellLine(%q) = %q, %v; want %q", tt.args, got, err, tt.want)
		}
	}
	out, code := shellRun(t, mustShellLine(t, "FOO=bar", "x")+" 2>&1")
	if code != 127 || !strings.Contains(out, "FOO=bar") {
		t.Errorf("sh -c of an assignment-like first word: exit %d, %q; want it run as a program (127, not found)", code, out)
	}
	if _, err := shellLine("windows", []string{"dir", "/b"}); err == nil || !strings.Contains(err.Error(), "Windows") {
		t.Errorf("shellLine on Windows = %v, want a usage error saying why", err)
	}
}

func mustShellLine(t *testing.T, args ...string) string {
	t.Helper()
	line, err := shellLine("linux", args)
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// TestEndNote checks the one line run says when a command did not simply
// exit, and its exit status: what happened, after how long, the status.
func TestEndNote(t *testing.T) {
	code := func(n int) *int { return &n }
	term := &runStop{signal: os.Interrupt, bySignal: true}
	for _, tt := range []struct {
		name     string
		res      scrollback.RunCommandResult
		timeout  string
		stop     *runStop
		wantCode int
		want     string
	}{
		{"exit 0", scrollback.RunCommandResult{ExitCode: code(0), DurationMS: 5}, "", nil, 0, ""},
		{"exit 3", scrollback.RunCommandResult{ExitCode: code(3), DurationMS: 5}, "", nil, 3, ""},
		{"timed out", scrollback.RunCommandResult{Signal: "SIGTERM", TimedOut: true, DurationMS: 1002}, "1s", nil, 124,
			"timed out after 1.002s (--timeout 1s): stopped the command's process group (it was killed by SIGTERM); exit status 124"},
		{"timed out, trapped", scrollback.RunCommandResult{ExitCode: code(143), TimedOut: true, DurationMS: 300}, "300ms", nil, 124,
			"timed out after 300ms (--timeout 300ms): stopped the command's process group (it exited with status 143); exit status 124"},
		{"killed", scrollback.RunCommandResult{Signal: "SIGKILL", DurationMS: 12}, "", nil, 137,
			"the command was killed by signal SIGKILL after 12ms; exit status 137"},
		{"interrupted", scrollback.RunCommandResult{Signal: "SIGTERM", DurationMS: 3200}, "", term, 130,
			"interrupted by SIGINT after 3.2s: stopped the command's process group (it was killed by SIGTERM); exit status 130"},
		{"interrupted by SIGTERM", scrollback.RunCommandResult{Signal: "SIGKILL", DurationMS: 2001}, "", &runStop{signal: syscall.SIGTERM, bySignal: true}, 143,
			"interrupted by SIGTERM after 2.001s: stopped the command's process group (it was killed by SIGKILL); exit status 143"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			timeout := parseDur(t, tt.timeout)
			gotCode := exitCode(tt.res, tt.stop)
			if gotCode != tt.wantCode {
				t.Errorf("exitCode = %d, want %d", gotCode, tt.wantCode)
			}
			if got := endNote(tt.res, timeout, tt.stop, gotCode); got != tt.want {
				t.Errorf("endNote =\n%q, want\n%q", got, tt.want)
			}
		})
	}
}

func parseDur(t *testing.T, s string) time.Duration {
	t.Helper()
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestRunNotStartedExits125: when run fails before its command starts, it
// exits 125 (as timeout(1) and env(1) do), with and without --json, so a
// script tells it from the command's own exit 1; a program not found or
// not executable keeps a shell's 127 and 126, and the command's own
// status is passed on.
func TestRunNotStartedExits125(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"SCROLLBACK_DB": filepath.Join(dir, "db"), "PATH": os.Getenv("PATH")}
	noexec := filepath.Join(dir, "noexec.sh")
	if err := os.WriteFile(noexec, []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		said string // in its output or on stderr
	}{
		{"a --cwd that does not exist", []string{"run", "--cwd", filepath.Join(dir, "nowhere"), "--", "echo", "hi"}, 125, "working directory"},
		{"--json too", []string{"run", "--json", "--cwd", filepath.Join(dir, "nowhere"), "--", "echo", "hi"}, 125, ""},
		{"an --stdin that cannot be read", []string{"run", "--stdin", filepath.Join(dir, "none.txt"), "--", "cat"}, 125, "--stdin"},
		{"a program not found", []string{"run", "--", "scrollback-no-such-program", "x"}, 127, "not found"},
		{"a program that cannot run", []string{"run", "--", noexec, "x"}, 126, "not executable"},
		{"the command's own 1", []string{"run", "--", "false"}, 1, ""},
		{"the command's own 125", []string{"run", "--", "sh", "-c", "exit 125"}, 125, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cliRun(t, env, tt.args...)
			if code != tt.code || !strings.Contains(stdout+stderr, tt.said) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d and a message with %q", code, stdout, stderr, tt.code, tt.said)
			}
			if slices.Contains(tt.args, "--json") && !strings.Contains(stdout, `"error"`) {
				t.Errorf("--json stdout %q, want the error object", stdout)
			}
		})
	}
}
