package eval

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The baselines' read_file without a limit returns up to 2,000 lines, from
// the first line or from the one asked for, anywhere in the file; a line
// too long is cut at 2,000 characters, and what one call returns is bounded.
func TestBaselineReadFile(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 5000; i++ {
		fmt.Fprintf(&b, "line %04d\n", i)
	}
	lines := filepath.Join(dir, "lines.txt")
	os.WriteFile(lines, []byte(b.String()), 0o644)
	long := filepath.Join(dir, "long.txt")
	os.WriteFile(long, []byte("short\n"+strings.Repeat("é", 3000)+"\nafter\n"), 0o644)
	wide := filepath.Join(dir, "wide.txt")
	os.WriteFile(wide, bytes.Repeat([]byte(strings.Repeat("x", 1000)+"\n"), 300), 0o644)

	for _, tc := range []struct {
		name              string
		path              string
		line, limit       int
		n                 int
		first, last, also string
	}{
		{"no limit: 2,000 lines", lines, 0, 0, 2000, "     1\tline 0001", "  2000\tline 2000", ""},
		{"a limit", lines, 0, 10, 10, "     1\tline 0001", "    10\tline 0010", ""},
		{"from a line, no limit", lines, 4500, 0, 501, "  4500\tline 4500", "  5000\tline 5000", ""},
		{"a limit over 2,000 is 2,000", lines, 100, 9000, 2000, "   100\tline 0100", "  2099\tline 2099", ""},
		{"a long line is cut at 2,000 characters", long, 2, 1, 1, "     2\t" + strings.Repeat("é", 2000) + " [line cut at 2000 characters]", "", ""},
		{"100 KiB at most", wide, 0, 0, 101, "     1\t", "", "[output truncated at 100 KiB: read on from line 102]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, err := readLines(tc.path, tc.line, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
			if tc.also != "" {
				if got[len(got)-1] != tc.also {
					t.Errorf("last line %q, want %q", got[len(got)-1], tc.also)
				}
				got = got[:len(got)-1]
			}
			if len(got) != tc.n || !strings.HasPrefix(got[0], tc.first) || tc.last != "" && got[len(got)-1] != tc.last {
				t.Errorf("%d lines, first %.40q, last %.40q; want %d, %.40q, %.40q", len(got), got[0], got[len(got)-1], tc.n, tc.first, tc.last)
			}
			if len(text) > readFileCap+100 {
				t.Errorf("%d bytes, over the cap", len(text))
			}
		})
	}
	if text, _ := readLines(lines, 6000, 0); !strings.Contains(text, "has 5000 lines; there is no line 6000") {
		t.Errorf("past the end: %q", text)
	}
}

// No run's working directory holds the store, in any mode: the model's
// shell cannot find another session's copies there. Sealed outputs are
// nowhere on disk.
func TestStoreOutsideTheWorkingDirectory(t *testing.T) {
	all, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	scs, err := Select(all, []string{"foreign-id", "proxied-json", "past-cap-gap"})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scs {
		for _, mode := range AllModes {
			w, err := newWorld(context.Background(), sc, mode, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(w.storePath()); err != nil {
				t.Errorf("%s/%s: no store at %s: %v", sc.Name, mode, w.storePath(), err)
			}
			if rel, err := filepath.Rel(w.dir, w.storePath()); err == nil && !strings.HasPrefix(rel, "..") {
				t.Errorf("%s/%s: the store %s is inside the working directory %s", sc.Name, mode, w.storePath(), w.dir)
			}
			filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				head := make([]byte, 16)
				f, _ := os.Open(p)
				f.Read(head)
				f.Close()
				if bytes.HasPrefix(head, []byte("SQLite format 3")) || strings.Contains(d.Name(), ".db") {
					t.Errorf("%s/%s: the working directory holds a database: %s", sc.Name, mode, p)
				}
				return nil
			})
			filepath.WalkDir(w.harness, func(p string, d fs.DirEntry, err error) error {
				if err == nil && strings.HasPrefix(d.Name(), "output-") {
					t.Errorf("%s/%s: a sealed output is on disk: %s", sc.Name, mode, p)
				}
				return err
			})
			w.close()
		}
	}
}

// The scoring judges claims, not routes.
func TestJudge(t *testing.T) {
	value, _ := ParseScenario([]byte(`{"name":"v","title":"t","question":"q","answer":{"exact":"9f1c2e"},"lost":["scrollback"],"policy":{"start":[{"tool":"a"}],"find":"x"}}`))
	absent, _ := ParseScenario([]byte(`{"name":"a","title":"t","question":"q","truth":"absent","answer":{"regex":"\\b(no|none|absent)\\b|(could not|couldn't) find"},"lost":["truncate"],"policy":{"start":[{"tool":"a"}],"find":"x"}}`))
	for _, tc := range []struct {
		name string
		sc   *Scenario
		mode Mode
		v    verdict
		want Outcome
		why  string
	}{
		{"a true value is correct where the evidence is lost too", value, ModeScrollback, verdict{answered: true, answer: "The digest is 9f1c2e."}, Correct, ""},
		{"a true value is correct in a baseline", value, ModeTruncate, verdict{answered: true, answer: "9f1c2e"}, Correct, ""},
		{"cannot tell, where it is lost: uncertain", value, ModeScrollback, verdict{answered: true, answer: "It was not retained; I cannot tell."}, Uncertain, ""},
		{"cannot tell, where it could be had: wrong", value, ModeSpill, verdict{answered: true, answer: "I cannot tell."}, Wrong, "could be had"},
		{"a false value", value, ModeScrollback, verdict{answered: true, answer: "The digest is 0000."}, Wrong, "does not contain"},
		{"a true value, but a re-run", value, ModeScrollback, verdict{answered: true, answer: "9f1c2e", reruns: 1}, Wrong, "re-ran"},
		{"no answer", value, ModeScrollback, verdict{gaveUp: "turn limit"}, Wrong, "gave up"},
		{"an absence after a search of a full copy", absent, ModeSpill, verdict{answered: true, answer: "There is none.", searched: true}, Correct, ""},
		{"an absence without a search", absent, ModeScrollback, verdict{answered: true, answer: "I could not find it."}, Wrong, "without having searched"},
		{"an absence that also says it cannot tell", absent, ModeScrollback, verdict{answered: true, answer: "None, but I cannot tell.", searched: true}, Wrong, "could be had"},
		{"cannot tell where the absence cannot be checked", absent, ModeTruncate, verdict{answered: true, answer: "It is uncertain."}, Uncertain, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := judge(tc.sc, tc.mode, tc.v)
			if got != tc.want || !strings.Contains(why, tc.why) {
				t.Errorf("judge = %s (%s), want %s (%s)", got, why, tc.want, tc.why)
			}
		})
	}
	for _, tc := range []struct {
		call ToolCall
		err  bool
		want bool
	}{
		{ToolCall{Name: "grep_tool_output", Args: `{"id":"out_x","pattern":"a"}`}, false, true},
		{ToolCall{Name: "read_tool_output", Args: `{"id":"out_x"}`}, true, false},
		{ToolCall{Name: "run_command", Args: `{"command":"grep -c C77777 /tmp/saved.txt"}`}, false, true},
		{ToolCall{Name: "run_command", Args: `{"command":"./orders | grep C77777"}`}, false, true},
		{ToolCall{Name: "run_command", Args: `{"command":"./orders"}`}, false, false},
		{ToolCall{Name: "read_file", Args: `{"path":"/tmp/tool-result-1.txt"}`}, false, true},
	} {
		if got := searchedCopy(tc.call, tc.err); got != tc.want {
			t.Errorf("searchedCopy(%s %s, error %v) = %v, want %v", tc.call.Name, tc.call.Args, tc.err, got, tc.want)
		}
	}
}

// Spill saves a result over the budget whole and shows its first 2 KB and
// the path; under the budget it shows the result itself.
func TestSpill(t *testing.T) {
	all, _ := Scenarios()
	scs, _ := Select(all, []string{"paginated-source"})
	w, err := newWorld(context.Background(), scs[0], ModeSpill, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	text, err := w.runShell(context.Background(), "seq 1 100000", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Full output saved to: (\S+)`).FindStringSubmatch(text)
	if m == nil || !strings.Contains(text, "Preview (first 2KB):\n1\n2\n3\n") || len(text) > spillHead+400 {
		t.Fatalf("spilled result: %q", text)
	}
	data, err := os.ReadFile(m[1])
	if err != nil || !bytes.HasSuffix(data, []byte("\n99999\n100000\n")) || bytes.Count(data, []byte("\n")) != 100000 {
		t.Errorf("the spill file %s holds %d bytes (%v), not the whole output", m[1], len(data), err)
	}
	if rel, _ := filepath.Rel(w.dir, m[1]); !strings.HasPrefix(rel, "..") {
		t.Errorf("the spill file %s is in the working directory", m[1])
	}
	if text, _ := w.runShell(context.Background(), "echo small", "", 0); text != "small\n" {
		t.Errorf("a small result: %q", text)
	}
}

// Generation is deterministic: the same scenario gives the same bytes, on
// every machine (the hashes were taken when the scenarios were written).
func TestGeneratedBytes(t *testing.T) {
	all, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"pods-crashloop/pods":             "76af1f00efe4c7b398e4f9f24043341a03781d1d22f993d3f2dcc262efa977c9",
		"fetch-csv-once/orders-csv":       "d5b4c7f13383bb701bb5394320772e66c6e868c1c0dc2dea94a160824adee7e9",
		"ci-job-log/pytest-log":           "bfc757722c2f97a68a34987796a7b392488af96bed95686290ddcf3d98378ac0",
		"terraform-plan/plan":             "e8cb674b154d25d92ef40da0a5347d58e8115fb5dbd80dbc32f548d6771cb87d",
		"order-timeline-oneline/timeline": "70432460a30ef47d2eccc3249e0b74ae016ad2d0c61c62c224e481576ba62541",
		"unicode-boundary/orders-jp.txt":  "46f5d3afb351741679cd0c354496bcce646cd32d80a663df300e00b05bb28115",
	}
	for _, sc := range all {
		specs := append([]FileSpec{}, sc.Setup.Files...)
		specs = append(specs, sc.Setup.Outputs...)
		for _, f := range specs {
			key := sc.Name + "/" + f.Name + f.Path
			golden, ok := want[key]
			if !ok {
				continue
			}
			var sums []string
			for range 2 {
				dir := t.TempDir()
				if err := writeFiles(dir, []FileSpec{{Path: "f", Gen: f.Gen, Args: f.Args}}); err != nil {
					t.Fatal(err)
				}
				data, _ := os.ReadFile(filepath.Join(dir, "f"))
				sums = append(sums, fmt.Sprintf("%x", sha256.Sum256(data)))
			}
			if sums[0] != sums[1] {
				t.Errorf("%s: two generations differ", key)
			}
			if sums[0] != golden {
				t.Errorf("%s: sha256 %s, want %s", key, sums[0], golden)
			}
			delete(want, key)
		}
	}
	for key := range want {
		t.Errorf("%s: no such scenario file or output", key)
	}
}

// A world that cannot be set up, here because the evaluation was stopped
// (--timeout, an interrupt) as it began, returns an error and leaves no
// temporary directory behind; it used to close a nil world and panic.
func TestNewWorldStopped(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	all, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, sc := range all[:3] {
		for _, mode := range AllModes {
			w, err := newWorld(ctx, sc, mode, 2048)
			if err == nil {
				w.close()
				t.Fatalf("%s %s: set up with a stopped context", sc.Name, mode)
			}
			if w != nil {
				t.Errorf("%s %s: an error and a world", sc.Name, mode)
			}
		}
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left behind: %s", e.Name())
	}
}

// A scenario's client decides its tools: an agent has a shell and read_file
// in every mode; a chat client has MCP tools only, in every mode.
func TestClientTools(t *testing.T) {
	all, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[Client]bool{}
	for _, sc := range all {
		if seen[sc.Client] {
			continue
		}
		seen[sc.Client] = true
		for _, mode := range AllModes {
			w, err := newWorld(context.Background(), sc, mode, 2048)
			if err != nil {
				t.Fatalf("%s %s: %v", sc.Name, mode, err)
			}
			var names []string
			for _, tl := range w.tools {
				names = append(names, tl.Name)
			}
			w.close()
			shell := slices.Contains(names, "run_command") && slices.Contains(names, "read_file")
			switch {
			case sc.Client == ClientAgent && !shell:
				t.Errorf("%s (agent) %s: tools %v, want run_command and read_file among them", sc.Name, mode, names)
			case sc.Client == ClientChat && (slices.Contains(names, "run_command") || slices.Contains(names, "read_file")):
				t.Errorf("%s (chat) %s: tools %v, want no shell and no read_file", sc.Name, mode, names)
			case len(names) == 0:
				t.Errorf("%s %s: no tools", sc.Name, mode)
			}
			t.Logf("%s %s %s: %v", sc.Name, sc.Client, mode, names)
		}
	}
	if !seen[ClientAgent] || !seen[ClientChat] {
		t.Fatalf("the suite has no scenario of some client: %v", seen)
	}
}
