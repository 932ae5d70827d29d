package runner

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// These run on Windows only: cmd.exe, its exit codes, and a timeout that
// ends a tree of processes through the job object.

func TestWindowsResults(t *testing.T) {
	tests := []struct {
		name     string
		cmd      Command
		wantCode int
		wantOut  string
	}{
		{"echo", Command{Command: "echo hello"}, 0, "hello\r\n"},
		{"exit status", Command{Command: "exit /b 3"}, 3, ""},
		{"quotes pass through", Command{Command: `echo "a b"`}, 0, "\"a b\"\r\n"},
		{"env", Command{Command: "echo %SCROLLBACK_A%", Env: map[string]string{"SCROLLBACK_A": "x y"}}, 0, "x y\r\n"},
		{"stdin", Command{Command: "findstr x", Stdin: "axb\r\n"}, 0, "axb\r\n"},
		// An argument vector: its program found on PATH with PATHEXT.
		{"args exit status", Command{Args: []string{"cmd", "/d", "/c", "exit", "3"}}, 3, ""},
		{"args not found", Command{Args: []string{"no-such-program-scrollback"}}, 127, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			tt.cmd.Stdout = &out
			r, err := Run(context.Background(), tt.cmd)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if r.ExitCode == nil || *r.ExitCode != tt.wantCode || r.Signal != "" {
				t.Errorf("ExitCode %v, Signal %q; want %d", deref(r.ExitCode), r.Signal, tt.wantCode)
			}
			if out.String() != tt.wantOut {
				t.Errorf("stdout = %q, want %q", out.String(), tt.wantOut)
			}
		})
	}
}

func TestWindowsTimeoutEndsTheTree(t *testing.T) {
	// A child cmd.exe that would run for a minute holds the pipes: Run
	// returns only once the job object has ended it too.
	start := time.Now()
	r, err := Run(context.Background(), Command{
		Command: "start /b cmd /c ping -n 60 127.0.0.1 & ping -n 60 127.0.0.1",
		Timeout: 300 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !r.TimedOut || r.Signal != "SIGKILL" || r.ExitCode != nil {
		t.Errorf("Result = %+v; want TimedOut, Signal SIGKILL, nil ExitCode", r)
	}
	if took := time.Since(start); took > 30*time.Second { // a hang detector: ping runs 60 s
		t.Errorf("Run took %v", took)
	}
}

func deref(p *int) string {
	if p == nil {
		return "nil"
	}
	return strconv.Itoa(*p)
}
