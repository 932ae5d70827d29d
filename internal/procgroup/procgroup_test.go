//go:build unix

package procgroup

import (
	"os/exec"
	"strings"
	"testing"
)

func TestStatus(t *testing.T) {
	tests := []struct {
		line       string
		wantCode   int // -1: none
		wantSignal string
	}{
		{"exit 0", 0, ""},
		{"exit 7", 7, ""},
		{"kill -TERM $$", -1, "SIGTERM"},
		{"kill -KILL $$", -1, "SIGKILL"},
	}
	for _, tt := range tests {
		cmd := Shell(tt.line)
		g, err := Start(cmd)
		if err != nil {
			t.Fatalf("Start(%q): %v", tt.line, err)
		}
		g.WaitExited()
		g.Kill()
		cmd.Wait()
		code, sig := g.Status(cmd.ProcessState)
		if sig != tt.wantSignal || (code == nil) != (tt.wantCode < 0) || code != nil && *code != tt.wantCode {
			t.Errorf("%q: Status = %v, %q; want %d, %q", tt.line, code, sig, tt.wantCode, tt.wantSignal)
		}
		if err := g.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}

// WaitExited must return for a process that has exited but is not reaped,
// and leave it for cmd.Wait.
func TestWaitExitedDoesNotReap(t *testing.T) {
	cmd := Shell("exit 5")
	g, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	g.WaitExited()
	g.WaitExited() // a zombie counts as exited
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "exit status 5") {
		t.Errorf("cmd.Wait after WaitExited = %v, want exit status 5", err)
	}
}

func TestStartError(t *testing.T) {
	cmd := exec.Command("/no/such/program")
	if _, err := Start(cmd); err == nil {
		t.Error("Start of a missing program succeeded")
	}
}
