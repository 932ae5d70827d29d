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

// TestHelpListsEveryCommand ties `scrollback help` to the command table:
// every command Main runs is listed with its usage and summary, version and
// help included, in the table's order, and the list an unknown command
// gets names the same commands. Help of each exits 0; help of a command
// that does not exist exits 2 with the list.
func TestHelpListsEveryCommand(t *testing.T) {
	var usage bytes.Buffer
	printUsage(&usage)
	at := -1
	for _, c := range commands {
		line := "\n  scrollback " + c.usage + "\n        " + c.summary + "\n"
		i := strings.Index(usage.String(), line)
		if i < 0 {
			t.Errorf("scrollback help does not list %s as %q", c.name, line)
			continue
		}
		if i < at {
			t.Errorf("scrollback help lists %s out of the table's order", c.name)
		}
		at = i
	}
	if !strings.Contains(usage.String(), "\n  scrollback "+helpUsage+"\n") {
		t.Errorf("scrollback help does not list help itself")
	}
	if _, ok := lookup("version"); !ok {
		t.Error("version is not in the command table")
	}
	var names []string
	for _, c := range commands {
		names = append(names, c.name)
	}
	stdio := func(out, errw io.Writer) IO {
		return IO{Stdin: strings.NewReader(""), Stdout: out, Stderr: errw, Getenv: func(string) string { return "" }}
	}
	var stderr bytes.Buffer
	if code := Main(context.Background(), []string{"help", "nosuch"}, stdio(io.Discard, &stderr)); code != 2 {
		t.Errorf("scrollback help nosuch: exit %d, want 2", code)
	}
	if want := "The commands are: " + strings.Join(append(names, "help"), ", ") + ".\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("scrollback help nosuch says %q, want %q", stderr.String(), want)
	}
	for _, name := range append(names, "help") {
		var out bytes.Buffer
		if code := Main(context.Background(), []string{"help", name}, stdio(&out, io.Discard)); code != 0 || out.Len() == 0 {
			t.Errorf("scrollback help %s: exit %d, %d bytes; want 0 and its help", name, code, out.Len())
		}
	}
}
