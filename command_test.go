package scrollback_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/preview"
	"github.com/scrollback-dev/scrollback/store"
	"github.com/scrollback-dev/scrollback/store/sqlite"
)

// newSession opens a fresh SQLite store in a temporary directory and
// returns a new session on it.
func newSession(t testing.TB, opts scrollback.Options) *scrollback.Session {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "scrollback.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	sess, err := scrollback.New(st, opts).NewSession(context.Background(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// readAll pages through a retained copy with ReadToolOutput, following
// NextOffset from 0, and returns the raw bytes of the copy as cat gives
// them together with the concatenated page texts.
func readAll(t *testing.T, sess *scrollback.Session, id string) (raw []byte, pages string, last scrollback.Page) {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for off := int64(0); ; {
		p, err := sess.ReadToolOutput(ctx, scrollback.ReadInput{ID: id, Offset: off})
		if err != nil {
			t.Fatalf("read at %d: %v", off, err)
		}
		b.WriteString(p.Text)
		last = p
		if !p.HasMore {
			break
		}
		if p.NextOffset <= off {
			t.Fatalf("no progress at offset %d", off)
		}
		off = p.NextOffset
	}
	var buf bytes.Buffer
	if _, err := sess.Cat(ctx, id, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), b.String(), last
}

func TestRunCommand(t *testing.T) {
	budget := scrollback.PreviewBudget
	tests := []struct {
		name      string
		in        scrollback.RunCommandInput
		exit      int // -1: killed by a signal
		signal    string
		timedOut  bool
		truncated bool
		complete  bool
		stdout    int64
		stderr    int64
		contains  []string
	}{
		{name: "small", in: scrollback.RunCommandInput{Command: "echo hello"},
			complete: true, stdout: 6, contains: []string{"hello\n"}},
		{name: "zero bytes", in: scrollback.RunCommandInput{Command: "true"}, complete: true},
		{name: "exactly the budget", in: scrollback.RunCommandInput{Command: "head -c 24576 /dev/zero | tr '\\0' x"},
			complete: true, stdout: int64(budget)},
		{name: "one byte over", in: scrollback.RunCommandInput{Command: "head -c 24577 /dev/zero | tr '\\0' x"},
			complete: true, truncated: true, stdout: int64(budget) + 1, contains: []string{"read_tool_output"}},
		{name: "stderr counted apart", in: scrollback.RunCommandInput{Command: "echo out; echo err >&2"},
			complete: true, stdout: 4, stderr: 4, contains: []string{"out\n", "err\n"}},
		{name: "non-zero exit is a result", in: scrollback.RunCommandInput{Command: "echo failing; exit 3"},
			exit: 3, complete: true, stdout: 8, contains: []string{"failing"}},
		{name: "missing command", in: scrollback.RunCommandInput{Command: "no-such-command-xyz"},
			exit: 127, complete: true, contains: []string{"not found"}},
		{name: "signal", in: scrollback.RunCommandInput{Command: "echo before; kill -9 $$"},
			exit: -1, signal: "SIGKILL", complete: true, stdout: 7, contains: []string{"before"}},
		{name: "stdin env cwd", in: scrollback.RunCommandInput{Command: "cat; echo $FOO; basename $(pwd)", Stdin: "in\n", Env: map[string]string{"FOO": "bar"}, Cwd: "/tmp"},
			complete: true, stdout: 11, contains: []string{"in\nbar\ntmp\n"}},
		{name: "NUL bytes", in: scrollback.RunCommandInput{Command: `printf 'a\000b'`},
			complete: true, stdout: 3, contains: []string{"a\x00b"}},
		{name: "invalid UTF-8 shown as U+FFFD", in: scrollback.RunCommandInput{Command: `printf 'a\377b'`},
			complete: true, stdout: 3, contains: []string{"a\uFFFDb"}},
		{name: "args run as they are", in: scrollback.RunCommandInput{Args: []string{"printf", "%s|", "a b", "$FOO", "c"}, Env: map[string]string{"FOO": "no"}},
			complete: true, stdout: 11, contains: []string{"a b|$FOO|c|"}},
		{name: "args exit status", in: scrollback.RunCommandInput{Args: []string{"sh", "-c", "echo failing; exit 3"}},
			exit: 3, complete: true, stdout: 8, contains: []string{"failing"}},
		{name: "args program not found", in: scrollback.RunCommandInput{Args: []string{"no-such-command-xyz", "a"}},
			exit: 127, complete: true, contains: []string{"scrollback: no-such-command-xyz: command not found"}},
	}
	sess := newSession(t, scrollback.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := sess.RunCommand(context.Background(), tt.in)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.exit == -1:
				if res.ExitCode != nil || res.Signal != tt.signal {
					t.Errorf("exit %v signal %q, want nil and %q", res.ExitCode, res.Signal, tt.signal)
				}
			case res.ExitCode == nil || *res.ExitCode != tt.exit:
				t.Errorf("exit code %v, want %d", res.ExitCode, tt.exit)
			}
			if res.Truncated != tt.truncated || res.Complete != tt.complete {
				t.Errorf("truncated %v complete %v, want %v %v", res.Truncated, res.Complete, tt.truncated, tt.complete)
			}
			if tt.stdout != 0 && res.StdoutBytes != tt.stdout || tt.stderr != 0 && res.StderrBytes != tt.stderr {
				t.Errorf("stdout %d stderr %d bytes, want %d %d", res.StdoutBytes, res.StderrBytes, tt.stdout, tt.stderr)
			}
			if len(res.Preview) > budget || !utf8.ValidString(res.Preview) {
				t.Errorf("preview of %d bytes (valid UTF-8: %v), budget %d", len(res.Preview), utf8.ValidString(res.Preview), budget)
			}
			for _, c := range tt.contains {
				if !strings.Contains(res.Preview, c) {
					t.Errorf("preview lacks %q:\n%.300s", c, res.Preview)
				}
			}
			if tt.truncated {
				if res.OutputID == "" || res.Recovery != scrollback.RecoveryAvailable {
					t.Errorf("output_id %q recovery %q for a truncated result", res.OutputID, res.Recovery)
				}
				if !strings.Contains(res.Preview, res.OutputID) {
					t.Error("the footer does not name the output_id")
				}
			} else if res.OutputID != "" || res.Recovery != scrollback.RecoveryNotNeeded {
				t.Errorf("output_id %q recovery %q for a result shown whole", res.OutputID, res.Recovery)
			}
		})
	}
}

func TestRunCommandBadInput(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	for _, in := range []scrollback.RunCommandInput{
		{Command: ""},
		{Command: "   "},
		{Command: "true", TimeoutMS: -1},
		{Command: "true", Cwd: "/does/not/exist"},
		{Command: "true", Env: map[string]string{"A=B": "c"}},
		{Command: "true", Args: []string{"true"}},
		{Args: []string{"", "x"}},
		{Args: []string{"echo", "a\x00"}},
	} {
		_, err := sess.RunCommand(context.Background(), in)
		if !errors.Is(err, scrollback.ErrArgument) {
			t.Errorf("%+v: error %v, want ErrArgument", in, err)
		}
	}
	if copies, _ := sess.Copies(context.Background()); len(copies) != 0 {
		t.Errorf("bad input left %d copies", len(copies))
	}
}

// A retained copy of an argument vector is listed with the command line a
// POSIX shell would need to run the same, and MCP never sees Args: the
// run_command tool takes one command line, per the contract.
func TestRunCommandArgsSource(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	ctx := context.Background()
	res, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Args: []string{"seq", "1", "100000"}})
	if err != nil || res.OutputID == "" {
		t.Fatalf("RunCommand = %+v, %v; want a retained copy", res.ShownCopy, err)
	}
	res, err = sess.RunCommand(ctx, scrollback.RunCommandInput{Args: []string{"sh", "-c", "seq 1 100000 # it's", "my name"}})
	if err != nil || res.OutputID == "" {
		t.Fatalf("RunCommand = %+v, %v; want a retained copy", res.ShownCopy, err)
	}
	copies, err := sess.Copies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, c := range copies {
		sources = append(sources, c.Source)
	}
	slices.Sort(sources)
	want := []string{`seq 1 100000`, `sh -c 'seq 1 100000 # it'"'"'s' 'my name'`}
	if !slices.Equal(sources, want) {
		t.Errorf("sources = %q, want %q", sources, want)
	}
	schema, err := jsonschema.For[scrollback.RunCommandInput](nil)
	if err != nil {
		t.Fatal(err)
	}
	for name := range schema.Properties {
		if strings.EqualFold(name, "args") {
			t.Errorf("run_command's input schema has %q: Args is for Go callers only", name)
		}
	}
	if _, ok := schema.Properties["command"]; !ok {
		t.Errorf("run_command's input schema lacks command: %v", schema.Properties)
	}
}

// A copy that crosses the cap keeps its head and its tail, says it is
// incomplete, and the pages concatenate to it byte for byte.
func TestRunCommandPastTheCap(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{
		Command: "seq 1 3000000; echo TRAILING-SUMMARY",
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || !res.Truncated || res.Recovery != scrollback.RecoveryAvailable {
		t.Fatalf("complete %v truncated %v recovery %q", res.Complete, res.Truncated, res.Recovery)
	}
	if res.TotalBytes > scrollback.CopyCap || res.StdoutBytes != 22888896+17 {
		t.Errorf("copy %d bytes (cap %d), stdout %d", res.TotalBytes, scrollback.CopyCap, res.StdoutBytes)
	}
	if res.Gap == nil || res.Gap.Bytes <= 0 {
		t.Fatalf("no gap reported: %+v", res.Gap)
	}
	if !strings.Contains(res.Preview, "TRAILING-SUMMARY") {
		t.Error("the preview's tail lost the last line")
	}
	raw, pages, last := readAll(t, sess, res.OutputID)
	if int64(len(raw)) != res.TotalBytes || pages != string(raw) {
		t.Fatalf("pages (%d bytes) differ from the copy (%d bytes)", len(pages), len(raw))
	}
	if last.HasMore || last.Complete {
		t.Errorf("last page hasMore %v complete %v, want both false", last.HasMore, last.Complete)
	}
	if !bytes.HasPrefix(raw, []byte("1\n2\n3\n")) || !bytes.HasSuffix(raw, []byte("3000000\nTRAILING-SUMMARY\n")) {
		t.Error("the copy lost its head or its tail")
	}
	if !bytes.Contains(raw[res.Gap.Offset:], []byte("dropped")) {
		t.Error("no marker line at the gap")
	}
}

// One 20 MiB line with no newline: the preview cuts mid-line, the copy is
// capped, nothing splits.
func TestRunCommandHugeLine(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{
		Command: "head -c 20971520 /dev/zero | tr '\\0' 'é' 2>/dev/null || head -c 20971520 /dev/zero | tr '\\0' y",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.Complete || len(res.Preview) > scrollback.PreviewBudget || !utf8.ValidString(res.Preview) {
		t.Fatalf("truncated %v complete %v preview %d bytes", res.Truncated, res.Complete, len(res.Preview))
	}
}

// A timeout stops the whole process group, even with children that keep
// writing, and the output before it is kept. The timeout is short, so a busy
// machine may fire it before the shell has started its child or written more
// than the preview budget; the run is then repeated with a timeout twice as
// long, rather than asserting that 300 ms is enough.
func TestRunCommandTimeoutKillsGroup(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	pidFile := filepath.Join(t.TempDir(), "pid")
	var res scrollback.RunCommandResult
	for timeout := int64(300); ; timeout *= 2 {
		os.Remove(pidFile)
		start := time.Now()
		var err error
		res, err = sess.RunCommand(context.Background(), scrollback.RunCommandInput{
			Command:   "(while :; do echo child; done) & echo $! > '" + pidFile + "'; while :; do echo parent; done",
			TimeoutMS: timeout,
		})
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut || time.Since(start) > 60*time.Second { // the command never ends by itself
			t.Fatalf("timed_out %v after %s", res.TimedOut, time.Since(start))
		}
		_, statErr := os.Stat(pidFile)
		if (statErr == nil && res.TotalBytes > int64(scrollback.PreviewBudget)) || timeout >= 10000 {
			break
		}
		t.Logf("the %d ms timeout fired after %d bytes, before the command was under way; again with a longer one", timeout, res.TotalBytes)
	}
	if !res.Truncated || res.Recovery != scrollback.RecoveryAvailable {
		t.Errorf("the output before the timeout was not kept: %d bytes, truncated %v recovery %q", res.TotalBytes, res.Truncated, res.Recovery)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	// The child is gone, or a zombie left for init to reap (in a container
	// PID 1 may never reap it); either way it no longer runs or writes.
	// A hang detector: a child that escaped the kill would run for ever.
	deadline := time.Now().Add(30 * time.Second)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || processState(stat) == 'Z' {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child %d still runs after the timeout: %s", pid, stat)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processState returns the state letter of a /proc/PID/stat line.
func processState(stat []byte) byte {
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2]
	}
	return 0
}

// A context cancelled mid-command (a client that went away) stops the
// command; the output so far is still saved, all of it. The context is
// cancelled once the command has written its output (it then sleeps), not
// after a fixed delay that a busy machine can beat before the output
// outgrows the preview.
func TestRunCommandCancelled(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	marker := filepath.Join(t.TempDir(), "written")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(marker); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "seq 1 100000; : > '" + marker + "'; sleep 60"})
	if err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want one wrapping the context's", err)
	}
	// A hang detector: not stopped, the command would run for 60 s.
	if res.DurationMS > 30000 {
		t.Errorf("the command ran %d ms after its context ended", res.DurationMS)
	}
	if !res.Truncated || res.Recovery != scrollback.RecoveryAvailable {
		t.Fatalf("truncated %v recovery %q, want the output retained", res.Truncated, res.Recovery)
	}
	var want bytes.Buffer
	for i := 1; i <= 100000; i++ {
		fmt.Fprintln(&want, i)
	}
	if raw, _, _ := readAll(t, sess, res.OutputID); !bytes.Equal(raw, want.Bytes()) {
		t.Errorf("retained %d bytes, want the command's %d bytes of output", len(raw), want.Len())
	}
}

// A save that fails (a full disk) makes recovery "unavailable" with the
// reason; the command's own result still comes back, and what was stored
// before reads back whole.
func TestRunCommandDiskFull(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root (CI runs as root)")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	st, err := sqlite.Open(filepath.Join(dir, "full.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess, err := scrollback.New(st, scrollback.Options{}).NewSession(context.Background(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	// A copy that fits, retained before the disk fills.
	before, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{Command: "seq 1 30000"})
	if err != nil || before.OutputID == "" {
		t.Fatalf("the first run retained nothing: %v, %+v", err, before.Recovery)
	}
	res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{Command: "seq 1 1000000; exit 4"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Recovery != scrollback.RecoveryUnavailable || res.RecoveryError == "" || res.OutputID != "" {
		t.Fatalf("recovery %q error %q id %q, want unavailable with a reason", res.Recovery, res.RecoveryError, res.OutputID)
	}
	if res.ExitCode == nil || *res.ExitCode != 4 || !strings.HasPrefix(res.Preview, "1\n2\n") || !strings.Contains(res.Preview, "1000000\n") {
		t.Errorf("the command's own result was lost: exit %v preview %.40q", res.ExitCode, res.Preview)
	}
	if !strings.Contains(res.Preview, "not saved") || !strings.Contains(res.Preview, "cannot be read back") || len(res.Preview) <= scrollback.ShownBudget {
		t.Errorf("the footer does not say the rest cannot be read back, or the preview (%d bytes) does not use the whole budget though nothing was saved", len(res.Preview))
	}
	// Nothing stored before is lost, and the failed save left nothing.
	copies, err := sess.Copies(context.Background())
	if err != nil || len(copies) != 1 || copies[0].ID != before.OutputID {
		t.Errorf("after the failed save: %d copies (%v), want only the earlier one", len(copies), err)
	}
	var want bytes.Buffer
	for i := 1; i <= 30000; i++ {
		fmt.Fprintln(&want, i)
	}
	if raw, _, _ := readAll(t, sess, before.OutputID); !bytes.Equal(raw, want.Bytes()) {
		t.Errorf("the earlier copy reads back %d bytes, want its %d", len(raw), want.Len())
	}
}

// A read-only database: the same.
func TestRunCommandReadOnlyDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ro.db")
	rw, err := sqlite.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	sessID, err := rw.CreateSession(context.Background(), scrollback.LocalOwner)
	if err != nil {
		t.Fatal(err)
	}
	rw.Close()
	ro, err := sqlite.Open(path, &sqlite.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	sess, err := scrollback.New(ro, scrollback.Options{}).Session(context.Background(), scrollback.LocalOwner, sessID.ID)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{Command: "seq 1 100000"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Recovery != scrollback.RecoveryUnavailable || !strings.Contains(res.RecoveryError, "read") {
		t.Errorf("recovery %q error %q", res.Recovery, res.RecoveryError)
	}
	if res.ExitCode == nil || *res.ExitCode != 0 || !res.Truncated {
		t.Errorf("result lost: %+v", res)
	}
}

// A model that knows the answer is at the end asks for the tail.
func TestRunCommandPreviewShape(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	ctx := context.Background()
	res, err := sess.RunCommand(ctx, scrollback.RunCommandInput{
		Command: "seq 1 100000",
		Preview: &scrollback.PreviewShape{HeadBytes: intp(0), TailBytes: intp(20000)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(res.Preview, "1\n2\n") || !strings.HasSuffix(res.Preview, "99999\n100000\n") {
		t.Errorf("tail-only preview shows the head or lacks the end: %.60q … %.60q", res.Preview, res.Preview[max(0, len(res.Preview)-60):])
	}
	if len(res.Preview) > scrollback.PreviewBudget {
		t.Errorf("preview %d bytes", len(res.Preview))
	}
	askHead := (preview.ShownHead + preview.ShownTail) * 3 / 4
	res, err = sess.RunCommand(ctx, scrollback.RunCommandInput{
		Command: "seq 1 100000",
		Preview: &scrollback.PreviewShape{HeadBytes: intp(askHead)},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The tail gets what the head leaves of the default head and tail
	// (ShownHead+ShownTail of ShownBudget), less at most a quarter to end
	// on a line.
	wantTail := preview.ShownHead + preview.ShownTail - askHead
	if i := strings.Index(res.Preview, "[..."); !strings.HasPrefix(res.Preview, "1\n2\n") || !strings.HasSuffix(res.Preview, "100000\n") ||
		len(res.Preview) > scrollback.ShownBudget || i < askHead*9/10 || i > askHead || len(res.Preview)-strings.Index(res.Preview, "]\n")-2 < wantTail*3/4 {
		t.Errorf("a %d-byte head should leave the rest of %d bytes to the tail: %d bytes:\n%s", askHead, preview.ShownHead+preview.ShownTail, len(res.Preview), res.Preview)
	}
	for _, shape := range []scrollback.PreviewShape{
		{HeadBytes: intp(-1)},
		{TailBytes: intp(-5)},
		{HeadBytes: intp(20000), TailBytes: intp(20000)},
		{HeadBytes: intp(0), TailBytes: intp(0)},
	} {
		if _, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "true", Preview: &shape}); !errors.Is(err, scrollback.ErrArgument) {
			t.Errorf("shape %+v: error %v, want ErrArgument", shape, err)
		}
	}
}

// A failed command's error line reaches the preview even when a megabyte
// of output surrounds it: make-like (error at the end) and error early on
// stderr with more stdout after it.
func TestRunCommandErrorFirst(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	for _, tt := range []struct{ name, command, want, status string }{
		{"make-like", "seq 1 200000; echo 'main.c:12: error: expected ;' >&2; echo 'make: *** [all] Error 2' >&2; exit 2",
			"main.c:12: error: expected ;", "exit status 2"},
		{"error then more output", "echo 'fatal: config file missing' >&2; seq 1 200000; exit 1",
			"fatal: config file missing", "exit status 1"},
		{"error in the middle", "seq 1 100000; echo 'fatal: config file missing' >&2; seq 1 100000; exit 1",
			"fatal: config file missing", "exit status 1"},
		{"killed", "seq 1 100000; echo 'panic: out of memory' >&2; seq 1 200000; kill -9 $$",
			"panic: out of memory", "SIGKILL"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{Command: tt.command})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Truncated || !strings.Contains(res.Preview, tt.want) || !strings.Contains(res.Preview, tt.status) {
				t.Errorf("preview lacks %q or %q:\n%s", tt.want, tt.status, res.Preview)
			}
			if len(res.Preview) > scrollback.PreviewBudget || !utf8.ValidString(res.Preview) {
				t.Errorf("preview %d bytes", len(res.Preview))
			}
		})
	}
	// A command that succeeds gets no stderr block.
	res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{Command: "echo note >&2; seq 1 200000"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(res.Preview, "wrote to stderr") {
		t.Error("a successful command got an error-first block")
	}
}

// A process that left the command's group and still held its output open
// when reading stopped may write more that no copy holds: the result says
// complete=false, not that the output is whole. Before, "early" came back
// with complete=true and "late" was lost.
func TestRunCommandOutputHeldOpenIsIncomplete(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	sess := newSession(t, scrollback.Options{})
	marker := filepath.Join(t.TempDir(), "escaped")
	res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{
		Command: "setsid sh -c ': > \"$0\"; sleep 3; echo late' '" + marker + "' & while [ ! -e '" + marker + "' ]; do sleep 0.01; done; echo early"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Preview != "early\n" || res.Complete {
		t.Errorf("preview %q, complete %v; want \"early\\n\" and complete false", res.Preview, res.Complete)
	}
	// A command whose output ends is complete, its background jobs read.
	res, err = sess.RunCommand(context.Background(), scrollback.RunCommandInput{Command: "(sleep 0.2; echo late) & echo early; wait"})
	if err != nil || !res.Complete || res.Preview != "early\nlate\n" {
		t.Errorf("RunCommand = %+v, %v; want the whole output, complete", res, err)
	}
}

// The error-first block's figure is the bytes of stderr it shows, as the
// command wrote them: a byte that is not UTF-8 shows as U+FFFD (three
// bytes) but counts as the one byte it was. Before, the figure counted the
// shown text, and a stderr of 13 bytes with three invalid ones was "the
// last 19 bytes".
func TestRunCommandErrorFirstCountsBytes(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	for _, tt := range []struct {
		name, stderr string // stderr as printf writes it
		bytes        int    // what the block shows, without the final newline
	}{
		{"utf-8", `bad é thing\n`, 12},
		{"invalid bytes", `bad \377\376\375 thing\n`, 13},
		{"lone continuation", `\200\200 oops`, 7},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{
				// The pauses keep stderr in the middle of the merged copy,
				// where neither the head nor the tail shows it.
				Command: "seq 1 20000; sleep 0.2; printf '" + tt.stderr + "' >&2; sleep 0.2; seq 1 20000; exit 3"})
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`The last (\d+) bytes it wrote to stderr come first; its output follows\.\]\n((?s).*?)\n\[scrollback: end of stderr\]`).FindStringSubmatch(res.Preview)
			if m == nil {
				t.Fatalf("no error-first block:\n%s", res.Preview[:min(len(res.Preview), 400)])
			}
			if n, _ := strconv.Atoi(m[1]); n != tt.bytes {
				t.Errorf("the block says %s bytes; it shows %q, %d bytes of stderr", m[1], m[2], tt.bytes)
			}
		})
	}
}

// The history helper shows up to 32 KiB whole; a larger result is retained
// and shows at most the shown size, 8 KiB, head and tail.
func TestHistory(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	ctx := context.Background()
	small := sess.History(ctx, "search", "q=x", []byte(strings.Repeat("r", scrollback.HistoryBudget)))
	if small.Truncated || small.OutputID != "" || len(small.Preview) != scrollback.HistoryBudget {
		t.Errorf("a result of exactly the budget: truncated %v id %q %d bytes", small.Truncated, small.OutputID, len(small.Preview))
	}
	var data strings.Builder
	for i := 0; data.Len() < 1<<20; i++ {
		fmt.Fprintf(&data, "record %d\n", i)
	}
	big := sess.History(ctx, "search", "q=y", []byte(data.String()))
	if !big.Truncated || big.OutputID == "" || len(big.Preview) > scrollback.ShownBudget || len(big.Preview) < scrollback.ShownBudget/2 {
		t.Fatalf("truncated %v id %q preview %d bytes", big.Truncated, big.OutputID, len(big.Preview))
	}
	if !strings.HasPrefix(big.Preview, "record 0\n") || !strings.HasSuffix(big.Preview, data.String()[data.Len()-20:]) {
		t.Error("the preview lost its head or its tail")
	}
	raw, _, _ := readAll(t, sess, big.OutputID)
	if string(raw) != data.String() {
		t.Errorf("the retained copy (%d bytes) is not the result (%d bytes)", len(raw), data.Len())
	}
}

// A result past the copy cap is cut as a command's output is: its copy
// keeps the head and the tail around a marker line, at most 8 MiB, and is
// incomplete. Before, History and Retain saved 20 MiB as a complete copy.
func TestHistoryPastTheCopyCap(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	ctx := context.Background()
	var data strings.Builder
	for i := 0; data.Len() < 20<<20; i++ {
		fmt.Fprintf(&data, "record %d\n", i)
	}
	whole := data.String()
	for _, tc := range []struct {
		name string
		sh   func() scrollback.Shown
	}{
		{"History", func() scrollback.Shown { return sess.History(ctx, "export", "all", []byte(whole)) }},
		{"Retain", func() scrollback.Shown {
			return sess.Retain(ctx, scrollback.RetainInput{Tool: "export", Data: []byte(whole), Complete: true})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh := tc.sh()
			if sh.OutputID == "" || sh.Complete || sh.TotalBytes > scrollback.CopyCap {
				t.Fatalf("id %q complete %v totalBytes %d: want an incomplete copy of at most %d bytes", sh.OutputID, sh.Complete, sh.TotalBytes, scrollback.CopyCap)
			}
			raw, _, last := readAll(t, sess, sh.OutputID)
			complete := last.Complete
			if complete || int64(len(raw)) != sh.TotalBytes || !strings.HasPrefix(string(raw), "record 0\n") || !strings.HasSuffix(string(raw), whole[len(whole)-100:]) {
				t.Errorf("copy of %d bytes, complete %v: want the head and the tail", len(raw), complete)
			}
			if !strings.Contains(string(raw), "the copy cap of 8388608 bytes was crossed") {
				t.Error("the copy has no marker line where its middle was dropped")
			}
			if !strings.Contains(sh.Preview, "incomplete") {
				t.Errorf("the footer does not say the copy is incomplete:\n%s", sh.Preview)
			}
		})
	}
}

// A timeout_ms past what a duration holds is refused, for run_command and
// run_code alike: before, it wrapped around, to the default or to a
// timeout of a few seconds.
func TestTimeoutTooLarge(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	ctx := context.Background()
	for _, ms := range []int64{9_300_000_000_000, 1<<63 - 1} {
		_, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "true", TimeoutMS: ms})
		if !errors.Is(err, scrollback.ErrArgument) || !strings.Contains(err.Error(), "too large") {
			t.Errorf("run_command timeout_ms %d: err = %v", ms, err)
		}
		_, err = sess.RunCode(ctx, scrollback.RunCodeInput{Code: "return 1", TimeoutMS: ms})
		if !errors.Is(err, scrollback.ErrArgument) || !strings.Contains(err.Error(), "too large") || !strings.Contains(err.Error(), "(30000)") {
			t.Errorf("run_code timeout_ms %d: err = %v", ms, err)
		}
	}
	// The largest that fits still runs.
	if _, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "true", TimeoutMS: math.MaxInt64 / int64(time.Millisecond)}); err != nil {
		t.Errorf("the largest timeout: %v", err)
	}
}

// TestRunCommandOutput: Input.Output receives the command's whole output
// as it comes, past the copy cap too, each stream in its order, while the
// result and the retained copy are what they would be without it.
func TestRunCommandOutput(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	var out bytes.Buffer
	res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{
		Command: "seq 1 2000000; echo ERR-LINE >&2",
		Output:  &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := seqText(1, 2000000)
	if res.StdoutBytes != int64(len(want)) || res.StderrBytes != int64(len("ERR-LINE\n")) {
		t.Fatalf("stdout %d stderr %d bytes", res.StdoutBytes, res.StderrBytes)
	}
	got := out.Bytes()
	if int64(len(got)) != res.StdoutBytes+res.StderrBytes {
		t.Fatalf("Output got %d bytes, the command wrote %d", len(got), res.StdoutBytes+res.StderrBytes)
	}
	if i := bytes.Index(got, []byte("ERR-LINE\n")); i < 0 {
		t.Fatal("Output lost stderr")
	} else if stdout := append(got[:i:i], got[i+len("ERR-LINE\n"):]...); string(stdout) != want {
		t.Fatal("Output's stdout is not the command's, in order")
	}
	if res.Complete || res.OutputID == "" || res.TotalBytes > scrollback.CopyCap {
		t.Errorf("the copy: complete %v id %q %d bytes", res.Complete, res.OutputID, res.TotalBytes)
	}
}

// seqText is what seq from to prints.
func seqText(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// A budget larger than the copy cap: a result that fits the budget is
// shown whole, as promised, whatever the cap (before, it was cut to the
// cap first and shown cut, with no copy and truncated false); one that
// does not fit is retained, the copy holding what the cap allows, and
// the result says it is truncated and incomplete (before, the cut copy
// fit the budget and was shown as if whole, with no copy).
func TestRetainBudgetOverTheCopyCap(t *testing.T) {
	const cap = 1 << 20
	sess := newSession(t, scrollback.Options{HistoryBudget: 2 * cap, Capture: capture.Limits{Copy: cap}})
	ctx := context.Background()
	text := func(n int) []byte {
		var b strings.Builder
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "record %d\n", i)
		}
		return []byte(b.String())
	}
	for _, tc := range []struct {
		name string
		sh   func(data []byte) scrollback.Shown
	}{
		{"History", func(data []byte) scrollback.Shown { return sess.History(ctx, "export", "all", data) }},
		{"Retain", func(data []byte) scrollback.Shown {
			return sess.Retain(ctx, scrollback.RetainInput{Tool: "export", Data: data, Complete: true, Budget: 2 * cap})
		}},
	} {
		t.Run(tc.name+"/fits", func(t *testing.T) {
			data := text(cap * 3 / 2)
			sh := tc.sh(data)
			if sh.Preview != string(data) || sh.Truncated || !sh.Complete || sh.OutputID != "" || sh.TotalBytes != int64(len(data)) {
				t.Errorf("a result of %d bytes within the budget: preview %d bytes, truncated %v complete %v id %q totalBytes %d; want it whole",
					len(data), len(sh.Preview), sh.Truncated, sh.Complete, sh.OutputID, sh.TotalBytes)
			}
		})
		t.Run(tc.name+"/over", func(t *testing.T) {
			data := text(3 * cap)
			sh := tc.sh(data)
			if !sh.Truncated || sh.Complete || sh.OutputID == "" || sh.Recovery != scrollback.RecoveryAvailable || sh.TotalBytes > cap {
				t.Fatalf("a result of %d bytes over the budget: truncated %v complete %v id %q recovery %q totalBytes %d; want a truncated preview of an incomplete copy of at most %d bytes",
					len(data), sh.Truncated, sh.Complete, sh.OutputID, sh.Recovery, sh.TotalBytes, cap)
			}
			raw, _, last := readAll(t, sess, sh.OutputID)
			if last.Complete || int64(len(raw)) != sh.TotalBytes || !bytes.HasPrefix(raw, data[:100]) || !bytes.HasSuffix(raw, data[len(data)-100:]) {
				t.Errorf("copy of %d bytes, complete %v: want the head and the tail", len(raw), last.Complete)
			}
			if len(sh.Preview) > scrollback.ShownBudget || !strings.Contains(sh.Preview, sh.OutputID) || !strings.Contains(sh.Preview, "incomplete") {
				t.Errorf("the preview (%d bytes) does not lead to the incomplete copy:\n%s", len(sh.Preview), sh.Preview)
			}
		})
	}
}

// A negative DefaultTimeout means no default timeout, as 0 does: before,
// it killed every command that gave no timeout_ms at once.
func TestNegativeDefaultTimeout(t *testing.T) {
	sess := newSession(t, scrollback.Options{DefaultTimeout: -time.Second})
	if d := sess.Engine().Options().DefaultTimeout; d != 0 {
		t.Errorf("Options().DefaultTimeout = %v; want 0, the timeout in force (none)", d)
	}
	res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{Command: "echo hi"})
	if err != nil || res.TimedOut || res.ExitCode == nil || *res.ExitCode != 0 || res.Preview != "hi\n" {
		t.Errorf("RunCommand = timed out %v exit %v preview %q, %v; want hi and exit 0", res.TimedOut, res.ExitCode, res.Preview, err)
	}
}

// A run_command call whose context ends says so in run_command's terms:
// whether the command ran, how it was stopped and where its output is
// (retained as an id, in the result, or nowhere), not a bare "context
// canceled"; errors.Is still finds the context's error.
func TestRunCommandContextEndedWording(t *testing.T) {
	sess := newSession(t, scrollback.Options{})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, tc := range []struct {
		name    string
		ctx     func() (context.Context, context.CancelFunc)
		command string
		is      error
		want    []string
	}{
		{"cancelled before start", func() (context.Context, context.CancelFunc) { return cancelled, func() {} }, "echo hi",
			context.Canceled, []string{"not started", "cancelled"}},
		{"deadline before start", func() (context.Context, context.CancelFunc) { return expired, func() {} }, "echo hi",
			context.DeadlineExceeded, []string{"not started", "deadline"}},
		{"deadline while running, small output", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 300*time.Millisecond)
		}, "echo hi; sleep 60", context.DeadlineExceeded, []string{"stopped", "deadline", "in the result"}},
		{"deadline while running, output retained", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 500*time.Millisecond)
		}, "seq 1 100000; sleep 60", context.DeadlineExceeded, []string{"stopped", "deadline", "retained as out_"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := tc.ctx()
			defer cancel()
			_, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: tc.command})
			if !errors.Is(err, tc.is) {
				t.Fatalf("error %v; want one wrapping %v", err, tc.is)
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q does not say %q", msg, w)
				}
			}
			for _, raw := range []string{"context canceled", "context deadline exceeded", "runner:"} {
				if strings.Contains(msg, raw) {
					t.Errorf("%q says %q, not in run_command's terms", msg, raw)
				}
			}
		})
	}
}

// A preview budget larger than the copy cap: a command whose output
// crossed the cap is retained, its preview truncated, even though the
// copy the cap left would fit the budget (before, that copy was shown as
// the whole output, truncated false, with no output_id).
func TestRunCommandBudgetOverTheCopyCap(t *testing.T) {
	const cap = 1 << 20
	sess := newSession(t, scrollback.Options{PreviewBudget: 2 * cap, Capture: capture.Limits{Copy: cap}})
	ctx := context.Background()
	res, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "seq 1 400000"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Gap == nil || !res.Truncated || res.Complete || res.OutputID == "" || res.Recovery != scrollback.RecoveryAvailable {
		t.Fatalf("gap %v truncated %v complete %v id %q recovery %q; want a truncated preview of an incomplete copy", res.Gap, res.Truncated, res.Complete, res.OutputID, res.Recovery)
	}
	raw, _, last := readAll(t, sess, res.OutputID)
	if last.Complete || int64(len(raw)) != res.TotalBytes || res.TotalBytes > cap || !strings.HasPrefix(string(raw), "1\n2\n") || !strings.HasSuffix(string(raw), "\n400000\n") {
		t.Errorf("copy of %d bytes (totalBytes %d), complete %v: want the head and tail, at most %d bytes", len(raw), res.TotalBytes, last.Complete, cap)
	}
	if len(res.Preview) > scrollback.ShownBudget || !strings.Contains(res.Preview, res.OutputID) {
		t.Errorf("the preview (%d bytes) does not lead to the copy:\n%s", len(res.Preview), res.Preview)
	}
	// Within the cap, the output is shown whole as before.
	small, err := sess.RunCommand(ctx, scrollback.RunCommandInput{Command: "seq 1 100000"})
	if err != nil || small.Truncated || small.OutputID != "" || !small.Complete || small.Preview != seqText(1, 100000) {
		t.Errorf("output within the cap and the budget: truncated %v id %q complete %v, %v; want it whole", small.Truncated, small.OutputID, small.Complete, err)
	}
}

// TestRunCommandErrorLinesWhileSpilled: a long output's error-like lines
// are listed in the footer with their line numbers and offsets, whether
// they were searched while the command ran (the spilled head, chunk by
// chunk, one of them across a chunk's end) or after it (the last 4 KiB
// are never settled before the command ends: row 199900).
func TestRunCommandErrorLinesWhileSpilled(t *testing.T) {
	errAt := map[int]bool{4000: true, 7775: true, 90000: true, 150001: true, 199900: true}
	var b strings.Builder
	var want []string
	for n := 1; n <= 200000; n++ {
		line := fmt.Sprintf("INFO row %d ok\n", n)
		if errAt[n] {
			line = fmt.Sprintf("ERROR row %d failed\n", n)
			want = append(want, fmt.Sprintf("  %d:%d: ERROR row %d failed", n, b.Len(), n))
		}
		b.WriteString(line)
	}
	if at := strings.Index(b.String(), "ERROR row 7775"); at/store.ChunkSize == (at+20)/store.ChunkSize {
		t.Fatalf("row 7775 at %d does not cross a chunk's end; move it", at)
	}
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	sess := newSession(t, scrollback.Options{})
	res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{Args: []string{"cat", path}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Recovery != scrollback.RecoveryAvailable || !res.Complete {
		t.Fatalf("recovery %q complete %v", res.Recovery, res.Complete)
	}
	for _, w := range want {
		if !strings.Contains(res.Preview, w) {
			t.Errorf("the footer does not list %q:\n%s", w, res.Preview)
		}
	}
}

// A single JSON document's footer gives its outline and no error-like
// lines, which in a document are pieces of the data; JSON Lines, a stream
// of records, keep them.
func TestRunCommandJSONFooterLines(t *testing.T) {
	var doc, lines strings.Builder
	doc.WriteString("[\n")
	for n := 1; n <= 2000; n++ {
		title := fmt.Sprintf("issue %d is fine", n)
		if n%100 == 0 {
			title = fmt.Sprintf("checkout fails when issue %d is open", n)
		}
		sep := ",\n"
		if n == 2000 {
			sep = "\n"
		}
		fmt.Fprintf(&doc, " {\"number\":%d,\"title\":%q}%s", n, title, sep)
		fmt.Fprintf(&lines, "{\"number\":%d,\"title\":%q}\n", n, title)
	}
	doc.WriteString("]\n")
	dir := t.TempDir()
	sess := newSession(t, scrollback.Options{})
	for _, tt := range []struct {
		name, data string
		errors     bool
	}{
		{"document", doc.String(), false},
		{"lines", lines.String(), true},
	} {
		path := filepath.Join(dir, tt.name)
		if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := sess.RunCommand(context.Background(), scrollback.RunCommandInput{Args: []string{"cat", path}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Preview, "Outline (offset where each value starts)") {
			t.Errorf("%s: no outline:\n%s", tt.name, res.Preview)
		}
		if got := strings.Contains(res.Preview, "Error-like lines not shown"); got != tt.errors {
			t.Errorf("%s: error-like lines listed: %v, want %v:\n%s", tt.name, got, tt.errors, res.Preview)
		}
	}
}
