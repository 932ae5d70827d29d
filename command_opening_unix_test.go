//go:build unix

package scrollback_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/scrollback-dev/scrollback"
)

// RunCommandOpening starts the command before its session is open: here
// open cannot return before the command has written to a FIFO, which would
// deadlock were open called first. The copy is then saved in the session
// open returned, its head spilled while the command still ran.
func TestRunCommandOpening(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	sess, st := newCountingSession(t)
	cmd := fmt.Sprintf("printf started > '%s'; seq 1 100000; sleep 0.2; seq 100001 200000", fifo)
	res, err := scrollback.New(nil, scrollback.Options{}).RunCommandOpening(t.Context(), scrollback.RunCommandInput{Command: cmd},
		func(ctx context.Context) (*scrollback.Session, error) {
			// Opening a FIFO to read waits for its writer: the command.
			got := make(chan string, 1)
			go func() {
				f, err := os.Open(fifo)
				if err != nil {
					got <- err.Error()
					return
				}
				defer f.Close()
				b, _ := io.ReadAll(f)
				got <- string(b)
			}()
			select {
			case s := <-got:
				if s != "started" {
					return nil, fmt.Errorf("read %q from the FIFO, want the command's %q", s, "started")
				}
			case <-time.After(time.Minute):
				return nil, errors.New("the command did not start while its session was being opened")
			}
			return sess, nil
		})
	if err != nil || res.OutputID == "" || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("RunCommandOpening = %+v, %v; want a retained copy of a command that succeeded", res, err)
	}
	var want bytes.Buffer
	for i := 1; i <= 200000; i++ {
		fmt.Fprintln(&want, i)
	}
	raw, _, _ := readAll(t, sess, res.OutputID)
	if !bytes.Equal(raw, want.Bytes()) {
		t.Errorf("copy of %d bytes differs from the output (%d bytes) at %d", len(raw), want.Len(), firstDiff(raw, want.Bytes()))
	}
	if st.appended.Load() == 0 {
		t.Errorf("no chunk was saved while the command ran")
	}
}

// When open fails, the command has run all the same, and its error is the
// call's.
func TestRunCommandOpeningFails(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	failed := errors.New("no store today")
	_, err := scrollback.New(nil, scrollback.Options{}).RunCommandOpening(t.Context(), scrollback.RunCommandInput{Command: "touch '" + ran + "'"},
		func(context.Context) (*scrollback.Session, error) { return nil, failed })
	if !errors.Is(err, failed) {
		t.Errorf("RunCommandOpening = %v; want open's error", err)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Errorf("the command did not run: %v", err)
	}
}
