package scrollback_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/scrollback-dev/scrollback"
)

// corpusCase is one script of codemode/testdata/corpus, written the way
// models write them, and what run_code must give for it.
type corpusCase struct {
	Name string `json:"-"`
	Code string `json:"-"`
	// Value is the result's preview: the return value, a string as
	// itself, anything else as JSON.
	Value string `json:"value"`
	// Retained is how many copies the run must list: nested results over
	// the budget, and nested commands' own copies.
	Retained int `json:"retained"`
	// Logs, when set, is the console output.
	Logs string `json:"logs,omitempty"`
}

// loadCorpus reads the scripts and expect.json, the file the end-to-end
// test through the TypeScript SDK reads too.
func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	dir := filepath.Join("codemode", "testdata", "corpus")
	b, err := os.ReadFile(filepath.Join(dir, "expect.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]corpusCase
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.[jt]s"))
	if len(files) < 30 || len(files) != len(want) {
		t.Fatalf("%d scripts, %d expectations: want the same number, at least 30", len(files), len(want))
	}
	var cases []corpusCase
	for _, f := range files {
		code, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := want[filepath.Base(f)]
		if !ok {
			t.Fatalf("no expectation for %s in expect.json", filepath.Base(f))
		}
		c.Name, c.Code = filepath.Base(f), string(code)
		cases = append(cases, c)
	}
	return cases
}

// TestCodeCorpus runs each corpus script through RunCode with a real
// SQLite store and real commands.
func TestCodeCorpus(t *testing.T) { codeModes(t, testCodeCorpus) }

func testCodeCorpus(t *testing.T, sess *scrollback.Session) {
	for _, c := range loadCorpus(t) {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			res, err := sess.RunCode(context.Background(), scrollback.RunCodeInput{Code: c.Code})
			if err != nil {
				t.Fatal(err)
			}
			if res.Error != nil {
				t.Fatalf("script error: %+v", res.Error)
			}
			if res.Preview != c.Value {
				t.Errorf("value %q, want %q", res.Preview, c.Value)
			}
			if len(res.Retained) != c.Retained {
				t.Errorf("retained %+v, want %d copies", res.Retained, c.Retained)
			}
			if c.Logs != "" && res.Logs != c.Logs {
				t.Errorf("logs %q, want %q", res.Logs, c.Logs)
			}
			ids := []string{}
			for _, r := range res.Retained {
				if r.OutputID == "" || slices.Contains(ids, r.OutputID) {
					t.Errorf("retained %+v: every copy has its own id", r)
				}
				ids = append(ids, r.OutputID)
				if _, err := sess.ReadToolOutput(context.Background(), scrollback.ReadInput{ID: r.OutputID}); err != nil {
					t.Errorf("retained %s cannot be read: %v", r.OutputID, err)
				}
			}
		})
	}
}
