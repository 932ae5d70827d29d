package wrap

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	toml "github.com/pelletier/go-toml/v2"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/wrapped/")

// The command every golden file is wrapped with: an absolute path, as the
// CLI passes.
const testCommand = "/usr/local/bin/scrollback"

// shapes are real-looking configurations of each client, in
// testdata/NAME, with fields the wrapper does not know, comments and
// trailing commas where the client allows them; the wrapped file is
// testdata/wrapped/NAME (go test -update rewrites them).
var shapes = []struct {
	file   string
	opts   Options
	report []string // the Changes, "PATH: ACTION (REASON)"
}{
	{"claude-desktop.json", Options{}, []string{
		"mcpServers.filesystem: wrapped",
		"mcpServers.memory: wrapped",
		"mcpServers.scrollback: skipped (it runs scrollback mcp itself: behind the proxy its output ids would belong to another session)",
	}},
	{"claude-code-mcp.json", Options{}, []string{
		"mcpServers.github: wrapped",
		"mcpServers.linear: wrapped",
		"mcpServers.legacy: skipped (" + sseReason + ")",
		"mcpServers.sentry: wrapped",
	}},
	{"claude-code-user.json", Options{}, []string{
		"mcpServers.fs: wrapped",
		"projects./home/me/app.mcpServers.db: wrapped",
		"projects./home/me/app.mcpServers.out: already wrapped",
	}},
	{"cursor.json", Options{}, []string{
		"mcpServers.postgres: wrapped",
		"mcpServers.remote: wrapped",
		"mcpServers.scrollback: skipped (it runs scrollback mcp itself: behind the proxy its output ids would belong to another session)",
	}},
	{"vscode-mcp.json", Options{}, []string{
		"servers.fetch: wrapped",
		"servers.api: wrapped",
	}},
	{"vscode-settings.json", Options{}, []string{
		"mcp.servers.git: wrapped",
	}},
	{"windsurf.json", Options{}, []string{
		"mcpServers.brave: wrapped",
		"mcpServers.figma: wrapped",
	}},
	{"gemini.json", Options{Gemini: true}, []string{
		"mcpServers.py: wrapped",
		"mcpServers.sse: skipped (" + sseReason + ")",
		"mcpServers.http: wrapped",
	}},
	{"zed.json", Options{}, []string{
		"context_servers.mcp-local-server: wrapped",
		"context_servers.old-style: wrapped",
		"context_servers.postgres-context-server: skipped (it has neither a command nor a URL)",
	}},
	{"codex.toml", Options{Format: TOML}, []string{
		"mcp_servers.docs: wrapped",
		"mcp_servers.github: wrapped",
		"mcp_servers.bare: wrapped",
		"mcp_servers.figma: skipped (it is a URL server: Codex refuses keys it does not know, so wrap cannot keep the original entry that --unwrap needs; write command = scrollback and args = [\"proxy\", \"--url\", URL] by hand)",
		"mcp_servers.scrollback: skipped (it runs scrollback mcp itself: behind the proxy its output ids would belong to another session)",
		"mcp_servers.inline: wrapped",
		"mcp_servers.noargs: wrapped",
	}},
}

func report(changes []Change) []string {
	var out []string
	for _, c := range changes {
		s := c.Path + ": " + c.Action
		if c.Reason != "" {
			s += " (" + c.Reason + ")"
		}
		out = append(out, s)
	}
	return out
}

// TestShapes wraps each client's configuration, compares it with its
// golden file, wraps it again (nothing changes), unwraps it (the original,
// byte for byte) and unwraps the original (nothing changes).
func TestShapes(t *testing.T) {
	for _, s := range shapes {
		t.Run(s.file, func(t *testing.T) {
			opts := s.opts
			opts.Command = testCommand
			in, err := os.ReadFile(filepath.Join("testdata", s.file))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Wrap(in, opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := report(res.Changes); strings.Join(got, "\n") != strings.Join(s.report, "\n") {
				t.Errorf("report:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(s.report, "\n"))
			}
			golden := filepath.Join("testdata", "wrapped", s.file)
			if *update {
				if err := os.WriteFile(golden, res.Out, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(res.Out, want) {
				t.Errorf("wrapped:\n%s\nwant (%s):\n%s", res.Out, golden, want)
			}

			again, err := Wrap(res.Out, opts)
			if err != nil || again.Changed || !bytes.Equal(again.Out, res.Out) {
				t.Errorf("wrapping twice changed the file (%v):\n%s", err, again.Out)
			}
			for _, c := range again.Changes {
				if c.Action == Wrapped {
					t.Errorf("wrapping twice wrapped %s again", c.Path)
				}
			}

			back, err := Unwrap(res.Out, opts)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(back.Out, in) {
				t.Errorf("unwrapped:\n%s\nwant the original:\n%s", back.Out, in)
			}
			plain, err := Unwrap(in, opts)
			if err != nil || plain.Changed || !bytes.Equal(plain.Out, in) {
				t.Errorf("unwrapping an unwrapped file changed it (%v)", err)
			}
		})
	}
}

// TestGoldenFilesParse checks that every wrapped golden file is still the
// client's syntax and runs the proxy with the absolute command.
func TestGoldenFilesParse(t *testing.T) {
	for _, s := range shapes {
		b, err := os.ReadFile(filepath.Join("testdata", "wrapped", s.file))
		if err != nil {
			t.Fatal(err)
		}
		if s.opts.Format == TOML {
			if _, err := Wrap(b, Options{Format: TOML, Command: testCommand}); err != nil {
				t.Errorf("%s: %v", s.file, err)
			}
		} else if _, err := decodeJSON(b); err != nil {
			t.Errorf("%s: %v", s.file, err)
		}
		if !bytes.Contains(b, []byte(`"`+testCommand+`"`)) {
			t.Errorf("%s: no server runs %s", s.file, testCommand)
		}
	}
}

func TestRunsScrollback(t *testing.T) {
	for _, c := range []struct {
		argv []string
		sub  string
	}{
		{[]string{"scrollback", "mcp"}, "mcp"},
		{[]string{"/opt/homebrew/bin/scrollback", "proxy", "--", "x"}, "proxy"},
		{[]string{`C:\Users\me\go\bin\scrollback.exe`, "mcp", "--db", "x"}, "mcp"},
		{[]string{"npx", "-y", "scrollback@latest", "mcp"}, "mcp"},
		{[]string{"npx", "-y", "scrollback", "proxy", "--", "srv"}, "proxy"},
		{[]string{"docker", "run", "-i", "--rm", "ghcr.io/scrollback-dev/scrollback:0.3", "mcp"}, "mcp"},
		{[]string{"scrollback", "run", "--", "ls"}, ""},
		{[]string{"npx", "-y", "@modelcontextprotocol/server-memory"}, ""},
		{[]string{"my-scrollback-tool", "mcp"}, ""},
		{[]string{"node", "scrollback/index.js"}, ""},
		{[]string{"/opt/sb", "proxy", "--", "x"}, "proxy"},
	} {
		sub, ok := runsScrollback(c.argv, "/opt/sb")
		if sub != c.sub || ok != (c.sub != "") {
			t.Errorf("runsScrollback(%q) = %q, %v; want %q", c.argv, sub, ok, c.sub)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, c := range []struct {
		name, in     string
		opts         Options
		line, column int
		want         string
	}{
		{"cut JSON", "{\n  \"mcpServers\": ", Options{}, 2, 17, "not valid JSON"},
		{"missing comma", "{\n  \"mcpServers\": {}\n  \"theme\": 1\n}", Options{}, 3, 3, "expecting ',' or '}'"},
		{"an array", "\n  [1]", Options{}, 2, 3, "holds an array, not a JSON object"},
		{"servers not an object", "{\n  \"mcpServers\": [1]\n}", Options{}, 2, 17, "mcpServers holds an array, not an object of servers"},
		{"bad TOML", "model = \"x\"\n[mcp_servers.a\ncommand = \"x\"\n", Options{Format: TOML}, 2, 15, "not valid TOML"},
		{"mcp_servers a string", "model = 1\nmcp_servers = \"x\"\n", Options{Format: TOML}, 2, 1, "mcp_servers is string, not a table"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Wrap([]byte(c.in), c.opts)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *Error", err)
			}
			if e.Line != c.line || e.Column != c.column || !strings.Contains(e.Msg, c.want) {
				t.Errorf("got %d:%d %q, want %d:%d and %q", e.Line, e.Column, e.Msg, c.line, c.column, c.want)
			}
		})
	}
	for _, c := range []struct {
		in   string
		opts Options
	}{
		{`{"theme": "dark"}`, Options{}},
		{"model = 1\n", Options{Format: TOML}},
	} {
		if _, err := Wrap([]byte(c.in), c.opts); !errors.Is(err, ErrNoServers) {
			t.Errorf("%q: got %v, want ErrNoServers", c.in, err)
		}
	}
}

// TestEditsInPlace: comments, blank lines and the layout of what is not a
// server stay byte for byte; a trailing comma on the last member stays.
func TestEditsInPlace(t *testing.T) {
	in := "{\n  // keep me\n  \"x\": [1,2,   3],\n\n  \"mcpServers\": {\"a\": {\"command\": \"srv\",},},\n}\n"
	res, err := Wrap([]byte(in), Options{Command: testCommand})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  // keep me\n  \"x\": [1,2,   3],\n\n  \"mcpServers\": {\"a\": {\"command\": \"" + testCommand + "\", \"args\": [\"proxy\", \"--\", \"srv\"],},},\n}\n"
	if string(res.Out) != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.Out, want)
	}
}

func TestTOMLCRLF(t *testing.T) {
	in := "[mcp_servers.a]\r\ncommand = \"srv\"\r\nenabled = true\r\n"
	res, err := Wrap([]byte(in), Options{Format: TOML, Command: testCommand})
	if err != nil {
		t.Fatal(err)
	}
	want := "[mcp_servers.a]\r\ncommand = \"" + testCommand + "\"\r\nargs = [\"proxy\", \"--\", \"srv\"]\r\nenabled = true\r\n"
	if string(res.Out) != want {
		t.Errorf("got %q, want %q", res.Out, want)
	}
	back, err := Unwrap(res.Out, Options{Format: TOML, Command: testCommand})
	if err != nil || string(back.Out) != in {
		t.Errorf("unwrapped %q (%v), want %q", back.Out, err, in)
	}
}

// decodeAny decodes a configuration with every empty "args" list taken out.
func decodeAny(t *testing.T, b []byte, format Format) any {
	var v any
	var err error
	if format == TOML {
		err = toml.Unmarshal(b, &v)
	} else {
		v, err = decodeJSON(b)
	}
	if err != nil {
		t.Fatal(err)
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if a, ok := v["args"].([]any); ok && len(a) == 0 {
				delete(v, "args")
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return v
}

// FuzzWrap: whatever the input, Wrap and Unwrap return an error or a file
// that decodes, and unwrapping what Wrap wrote gives back the input.
func FuzzWrap(f *testing.F) {
	for _, s := range shapes {
		b, err := os.ReadFile(filepath.Join("testdata", s.file))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, s.opts.Format == TOML)
	}
	f.Fuzz(func(t *testing.T, in []byte, isTOML bool) {
		opts := Options{Command: testCommand}
		if isTOML {
			opts.Format = TOML
		}
		res, err := Wrap(in, opts)
		if err != nil {
			return
		}
		if res.Changed {
			back, err := Unwrap(res.Out, opts)
			if err != nil {
				t.Fatalf("unwrapping what Wrap wrote: %v\n%s", err, res.Out)
			}
			// Servers that ran scrollback proxy before Wrap are unwrapped
			// too, so only a file without them must come back; an empty
			// args list comes back as none.
			if !bytes.Contains(in, []byte("proxy")) && !bytes.Equal(back.Out, in) {
				a, b := decodeAny(t, in, opts.Format), decodeAny(t, back.Out, opts.Format)
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("unwrap(wrap(x)) != x:\n%q\n%q", in, back.Out)
				}
			}
		}
	})
}
