package scrollback_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/codemode"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden files")

// golden compares got with testdata/golden/name, byte for byte.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *updateGolden {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s changed:\ngot  %s\nwant %s", name, got, want)
	}
}

// TestResultJSON pins the JSON of the run_command and run_code results,
// field names and order, and the schemas MCP derives from them: the contract
// fixes them, and the Go types share their preview fields by embedding,
// which must not move a field.
func TestResultJSON(t *testing.T) {
	code := 1
	var rc scrollback.RunCommandResult
	rc.Preview, rc.Truncated, rc.OutputID = "head\n...\ntail\n", true, "out_x"
	rc.ExitCode, rc.Signal, rc.TimedOut, rc.DurationMS = &code, "SIGTERM", true, 1500
	rc.StdoutBytes, rc.StderrBytes = 100, 20
	rc.TotalBytes, rc.Complete, rc.Recovery, rc.RecoveryError = 120, false, scrollback.RecoveryUnavailable, "disk full"
	rc.Gap = &scrollback.GapRef{Offset: 10, Bytes: 30, Lines: 3}

	var cr scrollback.RunCodeResult
	cr.Preview, cr.Truncated, cr.OutputID = "42", true, "out_y"
	cr.TotalBytes, cr.Complete, cr.Recovery, cr.RecoveryError = 2, true, scrollback.RecoveryAvailable, ""
	cr.Logs, cr.Error = "log\n", &codemode.Error{Kind: "thrown", Message: "boom", Line: 1, Column: 2}
	cr.Retained = []codemode.Ref{{Call: 1, Tool: "run_command", OutputID: "out_z", TotalBytes: 9, Complete: true, Holds: "output", Command: "make test"}}

	for name, v := range map[string]any{"run_command.json": rc, "run_code.json": cr, "run_command_empty.json": scrollback.RunCommandResult{}, "run_code_empty.json": scrollback.RunCodeResult{}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, name, append(b, '\n'))
	}
	for name, s := range map[string]func() (*jsonschema.Schema, error){
		"run_command.schema.json": func() (*jsonschema.Schema, error) { return jsonschema.For[scrollback.RunCommandResult](nil) },
		"run_code.schema.json":    func() (*jsonschema.Schema, error) { return jsonschema.For[scrollback.RunCodeResult](nil) },
	} {
		sc, err := s()
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.MarshalIndent(sc, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden(t, name, append(b, '\n'))
	}
}
