package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/scrollback-dev/scrollback/eval"
	"github.com/scrollback-dev/scrollback/eval/evaltest"
)

// TestMain lets the test binary act as scrollback-eval inside the scripts
// of testdata/script, so they run the real command line.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"scrollback-eval": func() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, os.Getenv)) },
	})
}

// TestScripts runs the harness's command line as written down in
// testdata/script/*.txt, against scripted models.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:  "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){"scriptedmodel": cmdScriptedModel},
	})
}

// cmdScriptedModel starts a scripted model (package evaltest) for the
// script's life and sets VAR to its base URL; with STATUS, every request
// fails with that HTTP status:
//
//	scriptedmodel POLICY VAR [STATUS]
func cmdScriptedModel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: scriptedmodel POLICY VAR [STATUS]")
	}
	p, ok := evaltest.Policies[args[0]]
	if !ok {
		ts.Fatalf("no policy %q", args[0])
	}
	all, err := eval.Scenarios()
	ts.Check(err)
	s := evaltest.NewServer(p, all)
	if len(args) == 3 {
		var status int
		_, err := fmt.Sscan(args[2], &status)
		ts.Check(err)
		s.Fail(status, `{"error":{"message":"scripted failure"}}`)
	}
	hs := httptest.NewServer(s)
	ts.Defer(hs.Close)
	ts.Setenv(args[1], hs.URL+"/v1")
}
