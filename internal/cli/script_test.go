package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/grep/greptest"
)

// TestMain lets the test binary act as the scrollback command inside the
// scripts of testdata/script, so they run the real command line, and as a
// Code Mode worker when a pool of a server under test starts it (the
// pool's command is this executable). Without the latter, each worker
// ran this whole test suite again, as root, until the pool killed it:
// tmpfs mounts and temporary directories were left behind by the
// thousand (55 GB of /tmp on a developer's machine).
func TestMain(m *testing.M) {
	codemode.WorkerMain()
	if runtime.GOOS == "windows" {
		// Their commands are sh syntax (seq, printf, sleep, ';'); on
		// Windows run_command runs cmd.exe, which runner's Windows tests
		// and CI's end-to-end check cover.
		if f := flag.Lookup("test.skip"); f != nil && f.Value.String() == "" {
			flag.Set("test.skip", "^(TestMCPHTTPRetentionKeepsHeldSession|TestMCPServerRetentionKeepsHeldSession)$")
			os.Stderr.WriteString("skipped on Windows, their commands are sh syntax: TestMCPHTTPRetentionKeepsHeldSession, TestMCPServerRetentionKeepsHeldSession\n")
		}
	}
	testscript.Main(m, map[string]func(){
		"scrollback": func() {
			// As cmd/scrollback does, so that scripts can interrupt it.
			ctx, stop := SignalContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := Main(ctx, os.Args[1:], Stdio())
			stop()
			os.Exit(code)
		},
	})
}

// TestScripts runs the CLI behaviour written down in testdata/script/*.txt.
// Each script gets its own state directory, so the default database is
// fresh for each.
func TestScripts(t *testing.T) {
	dir, files := "testdata/script", []string(nil)
	if runtime.GOOS == "windows" {
		// The others run sh commands, which cmd.exe does not understand.
		dir, files = "", []string{"testdata/script/eval.txt", "testdata/script/wrap.txt"}
		t.Log("on Windows only eval.txt and wrap.txt: the other scripts run sh commands")
	}
	testscript.Run(t, testscript.Params{
		Dir:   dir,
		Files: files,
		Setup: func(env *testscript.Env) error {
			env.Setenv("XDG_STATE_HOME", filepath.Join(env.WorkDir, "state"))
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, "cache"))
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			return os.MkdirAll(filepath.Join(env.WorkDir, "home"), 0o755)
		},
		Condition: func(cond string) (bool, error) {
			if cond == "readonly" {
				return canMakeReadOnly(), nil
			}
			if cond == "race" {
				return raceEnabled, nil
			}
			if cond == "postgres" {
				return os.Getenv("SCROLLBACK_TEST_POSTGRES") != "", nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"setjson":           cmdSetJSON,
			"jsonerror":         cmdJSONError,
			"genfile":           cmdGenFile,
			"genjson":           cmdGenJSON,
			"islink":            cmdIsLink,
			"installscrollback": cmdInstallScrollback,
			"readonly":          cmdReadOnly,
			"pgdatabase":        cmdPGDatabase,
			"setenvout": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 {
					ts.Fatalf("usage: setenvout VAR")
				}
				ts.Setenv(args[0], strings.TrimSpace(ts.ReadFile("stdout")))
			},
		},
	})
}

// cmdInstallScrollback copies the scrollback command (this test binary,
// which acts as scrollback under that name) into DIR, so that a script can
// put other programs beside it:
//
//	installscrollback DIR
func cmdInstallScrollback(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: installscrollback DIR")
	}
	self, err := os.Executable()
	ts.Check(err)
	data, err := os.ReadFile(self)
	ts.Check(err)
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	name := "scrollback"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	ts.Check(os.WriteFile(filepath.Join(dir, name), data, 0o755))
}

// cmdSetJSON sets an environment variable from a field of a JSON object:
//
//	setjson VAR FILE FIELD
func cmdSetJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: setjson VAR FILE FIELD")
	}
	var obj map[string]any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[1])), &obj))
	v, ok := obj[args[2]]
	if !ok {
		ts.Fatalf("no field %q in %s", args[2], args[1])
	}
	switch v := v.(type) {
	case string:
		ts.Setenv(args[0], v)
	case float64:
		ts.Setenv(args[0], fmt.Sprint(int64(v)))
	default:
		ts.Setenv(args[0], fmt.Sprint(v))
	}
}

// cmdJSONError checks that stdout is exactly a --json error of the kind
// given, {"error": {"kind": KIND, "message": "..."}}, with a message:
//
//	jsonerror KIND
func cmdJSONError(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: jsonerror KIND")
	}
	dec := json.NewDecoder(strings.NewReader(ts.ReadFile("stdout")))
	dec.DisallowUnknownFields()
	var e struct {
		Error *struct {
			Kind    string `json:"kind"`
			Message string `json:"message"`
		} `json:"error"`
	}
	ts.Check(dec.Decode(&e))
	if e.Error == nil || e.Error.Kind != args[0] || e.Error.Message == "" {
		ts.Fatalf("stdout is not a --json error of kind %s: %s", args[0], ts.ReadFile("stdout"))
	}
}

// cmdGenJSON writes greptest.OneLineJSON of about N bytes to a file: one
// line with NEEDLE-MID in its middle, NEEDLE-EDGE across a chunk boundary
// and NEEDLE-777 at its end:
//
//	genjson FILE N
func cmdGenJSON(ts *testscript.TestScript, neg bool, args []string) {
	var n int
	if neg || len(args) != 2 {
		ts.Fatalf("usage: genjson FILE N")
	}
	if _, err := fmt.Sscan(args[1], &n); err != nil {
		ts.Fatalf("genjson: bad size %q", args[1])
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), greptest.OneLineJSON(n), 0o600))
}

// cmdGenFile writes N numbered lines to a file, with an optional marker line
// in the middle:
//
//	genfile FILE N [MARKER]
func cmdGenFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: genfile FILE N [MARKER]")
	}
	var n int
	if _, err := fmt.Sscan(args[1], &n); err != nil {
		ts.Fatalf("genfile: bad count %q", args[1])
	}
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	defer f.Close()
	for i := 1; i <= n; i++ {
		if len(args) > 2 && i == n/2 {
			fmt.Fprintln(f, args[2])
			continue
		}
		fmt.Fprintf(f, "line %07d of the generated file\n", i)
	}
}

// cmdIsLink checks that FILE is a symbolic link: islink FILE.
func cmdIsLink(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: islink FILE")
	}
	st, err := os.Lstat(ts.MkAbs(args[0]))
	ts.Check(err)
	if isLink := st.Mode()&os.ModeSymlink != 0; isLink == neg {
		ts.Fatalf("%s: symbolic link %v, want %v", args[0], isLink, !neg)
	}
}
