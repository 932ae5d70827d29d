package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"regexp"
	"strings"
	"testing"
)

// TestEveryFlagErrorInOurWords gives every flag of every command a value
// it cannot take, and no value at all, and checks what the user reads: the
// flag, what it wants, an example, what it got; exit 2; never the flag
// package's own wording. A flag added later is checked as it comes, and a
// flag.Value of our own must say what it wants (a wanter).
func TestEveryFlagErrorInOurWords(t *testing.T) {
	stdio := IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	raw := regexp.MustCompile(`invalid value|parse error|flag provided but not defined|flag needs an argument|invalid boolean`)
	for _, c := range commands {
		if c.passthrough {
			continue // its flags are another program's (scrollback-eval's)
		}
		fs := helpFlags(context.Background(), c, stdio)
		if fs == nil {
			t.Fatalf("%s: --help did not reach the command's flag parsing", c.name)
		}
		fs.VisitAll(func(f *flag.Flag) {
			t.Run(c.name+"/"+f.Name, func(t *testing.T) {
				what, example, known := flagWants(f)
				if !known && !isStringFlag(f) {
					t.Fatalf("%s is neither a string nor a type flagWants knows: give its Value a wants method", dashed(f.Name))
				}
				if known && (what == "" || example == "") {
					t.Errorf("flagWants = %q, %q: want both what and an example", what, example)
				}
				run := func(args ...string) string {
					t.Helper()
					var stdout, stderr bytes.Buffer
					code := Main(context.Background(), append([]string{c.name}, args...), IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: stdio.Getenv})
					if code != 2 {
						t.Errorf("scrollback %s %s: exit %d, want 2 (stderr %q)", c.name, strings.Join(args, " "), code, stderr.String())
					}
					if stdout.Len() != 0 {
						t.Errorf("scrollback %s %s: stdout %q, want nothing", c.name, strings.Join(args, " "), stdout.String())
					}
					first, _, _ := strings.Cut(stderr.String(), "\n")
					if raw.MatchString(stderr.String()) {
						t.Errorf("scrollback %s %s: the flag package's words reach the user: %q", c.name, strings.Join(args, " "), first)
					}
					if !strings.Contains(stderr.String(), "\nusage: scrollback "+c.usage+"\n") {
						t.Errorf("scrollback %s %s: no usage line in %q", c.name, strings.Join(args, " "), stderr.String())
					}
					return first
				}
				prefix := "scrollback " + c.name + ": " + dashed(f.Name) + " wants "
				if !isBoolFlag(f) {
					if got := run(dashed(f.Name)); !strings.HasPrefix(got, prefix) || !strings.HasSuffix(got, ", got nothing") {
						t.Errorf("no value: %q, want %q...%q", got, prefix, ", got nothing")
					}
				}
				if known {
					want := prefix + what + " such as " + example + `, got "!bad!"`
					if got := run(dashed(f.Name) + "=!bad!"); got != want {
						t.Errorf("a bad value: %q, want %q", got, want)
					}
				}
			})
		})
	}
}

// isStringFlag reports whether f takes any string: it cannot refuse one.
func isStringFlag(f *flag.Flag) bool {
	v := f.Value
	if r, ok := v.(*recordingValue); ok {
		v = r.Value
	}
	g, ok := v.(flag.Getter)
	if !ok {
		return false
	}
	_, ok = g.Get().(string)
	return ok
}

func TestNearest(t *testing.T) {
	names := []string{"db", "json", "limit", "offset", "session", "session-quota", "timeout"}
	for _, tt := range []struct{ in, want string }{
		{"tiemout", "timeout"},
		{"sesion", "session"},
		{"sess", "session"},
		{"jsn", "json"},
		{"d", ""}, // one letter from db, but nothing to go on
		{"frobnicate", ""},
		{"x", ""},
	} {
		if got := nearest(tt.in, names); got != tt.want {
			t.Errorf("nearest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
