package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestHelpComplete checks what every registered command's help must hold,
// so that a command added later cannot ship with the flag package's bare
// dump: a summary, examples that run scrollback, and flags whose usage names
// the argument and says the default in words.
func TestHelpComplete(t *testing.T) {
	stdio := IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			if c.summary == "" || strings.HasSuffix(c.summary, ".") {
				t.Errorf("summary %q: want one line without a final period", c.summary)
			}
			if n := len(c.examples); n < 1 || n > 3 {
				t.Errorf("%d examples, want 1 to 3", n)
			}
			for _, e := range c.examples {
				if e.what == "" || !strings.Contains(e.line, "scrollback "+c.name) {
					t.Errorf("example %+v: want a description and a line that runs scrollback %s", e, c.name)
				}
			}
			fs := helpFlags(context.Background(), c, stdio)
			if fs == nil && !c.passthrough {
				t.Fatal("--help did not reach the command's flag parsing")
			}
			if fs == nil { // its flags are another program's (eval)
				fs = flag.NewFlagSet(c.name, flag.ContinueOnError)
			}
			fs.VisitAll(func(f *flag.Flag) {
				arg, usage := flag.UnquoteUsage(f)
				if !strings.Contains(usage, "default") {
					t.Errorf("--%s: usage %q does not say its default", f.Name, usage)
				}
				if !isBoolFlag(f) && !strings.Contains(f.Usage, "`"+arg+"`") {
					t.Errorf("--%s: usage %q does not name its argument in backquotes", f.Name, f.Usage)
				}
			})
			var help bytes.Buffer
			printHelp(&help, c, fs)
			wants := []string{"Usage:\n  scrollback " + c.usage + "\n", "\nFlags:\n", "\nExamples:\n"}
			if c.passthrough {
				wants = slices.Delete(wants, 1, 2)
			}
			for _, want := range wants {
				if !strings.Contains(help.String(), want) {
					t.Errorf("help lacks %q:\n%s", want, help.String())
				}
			}
		})
	}
}
