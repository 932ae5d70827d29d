package cli

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestServerJSONMatchesBinary checks the MCP Registry entry (server.json)
// against the flag set of the command it starts: its named arguments are
// flags of that command and take their values; each environment variable
// is one a flag reads; the default each description states is the
// binary's; and the npm package lists every variable the stdio server
// reads. (cmd/scrollback's TestServerJSON checks it against the schema.)
func TestServerJSONMatchesBinary(t *testing.T) {
	type arg struct {
		Type      string `json:"type"`
		Name      string `json:"name"`
		Value     string `json:"value"`
		Variables map[string]struct {
			Default string `json:"default"`
		} `json:"variables"`
	}
	var doc struct {
		Packages []struct {
			RegistryType string `json:"registryType"`
			Transport    struct {
				Type string `json:"type"`
			} `json:"transport"`
			PackageArguments []arg `json:"packageArguments"`
			Env              []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				Default     string `json:"default"`
				IsRequired  bool   `json:"isRequired"`
			} `json:"environmentVariables"`
		} `json:"packages"`
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "server.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("server.json: %v", err)
	}
	dockerfile, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	stdio := IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	// The default database, as the description of SCROLLBACK_DB writes it.
	home := func() (string, error) { return "/HOME", nil }
	none := func(string) string { return "" }
	unix, _ := defaultDBPath("linux", none, home, func(string) bool { return false })
	win, _ := defaultDBPath("windows", func(k string) string {
		if k == "LOCALAPPDATA" {
			return `C:\LAD`
		}
		return ""
	}, home, func(string) bool { return false })
	dbDefaults := []string{strings.Replace(unix, "/HOME", "~", 1), strings.Replace(win, `C:\LAD`, "%LocalAppData%", 1)}

	fallback := func(usage, env string) (string, bool) {
		m := regexp.MustCompile(`\$` + env + `\b[^)]*?, else ([^)]*)\)$`).FindStringSubmatch(usage)
		if m == nil {
			return "", false
		}
		return m[1], true
	}
	stated := regexp.MustCompile(`\(default:? ([^)]*)\)`)

	for i, p := range doc.Packages {
		where := p.RegistryType + " " + p.Transport.Type
		var cmdName string
		var named []arg
		for _, a := range p.PackageArguments {
			switch {
			case a.Type == "positional" && cmdName == "":
				cmdName = a.Value
			case a.Type == "named":
				named = append(named, a)
			default:
				t.Errorf("%s: package argument %+v: want the command first, then named flags", where, a)
			}
		}
		c, ok := lookup(cmdName)
		if !ok {
			t.Errorf("%s (package %d): the first package argument %q is not a scrollback command", where, i, cmdName)
			continue
		}
		fs := helpFlags(context.Background(), c, stdio)
		if fs == nil {
			t.Fatalf("%s: no flag set for scrollback %s", where, cmdName)
		}
		for _, a := range named {
			f := fs.Lookup(strings.TrimLeft(a.Name, "-"))
			if f == nil || !strings.HasPrefix(a.Name, "--") {
				t.Errorf("%s: scrollback %s has no flag %s", where, cmdName, a.Name)
				continue
			}
			if err := f.Value.Set(a.Value); err != nil {
				t.Errorf("%s: scrollback %s %s %s: %v", where, cmdName, a.Name, a.Value, err)
			}
		}
		read := map[string]*flag.Flag{}
		fs.VisitAll(func(f *flag.Flag) {
			for _, m := range regexp.MustCompile(`\$(SCROLLBACK_[A-Z_]+)`).FindAllStringSubmatch(f.Usage, -1) {
				read[m[1]] = f
			}
		})
		listed := map[string]bool{}
		for _, e := range p.Env {
			listed[e.Name] = true
			f := read[e.Name]
			if f == nil {
				t.Errorf("%s: %s is not read by any flag of scrollback %s", where, e.Name, cmdName)
				continue
			}
			if e.Default != "" {
				if p.RegistryType != "oci" || !strings.Contains(string(dockerfile), e.Name+"="+e.Default) {
					t.Errorf("%s: %s's default %q is not what the image sets (Dockerfile ENV)", where, e.Name, e.Default)
				}
			}
			m := stated.FindStringSubmatch(e.Description)
			if m == nil {
				if !e.IsRequired {
					t.Errorf("%s: %s's description %q does not state its default, (default ...)", where, e.Name, e.Description)
				}
				continue
			}
			switch {
			case e.Default != "":
				if !strings.Contains(m[1], e.Default) {
					t.Errorf("%s: %s's description says the default is %q, its default field %q", where, e.Name, m[1], e.Default)
				}
			case e.Name == "SCROLLBACK_DB":
				for _, want := range dbDefaults {
					if !strings.Contains(m[1], want) {
						t.Errorf("%s: %s's description says the default is %q; the binary's is %s", where, e.Name, m[1], want)
					}
				}
			default:
				want, ok := fallback(f.Usage, e.Name)
				if !ok {
					t.Errorf("%s: --%s's usage %q gives no default after $%s", where, f.Name, f.Usage, e.Name)
				} else if !strings.Contains(m[1], want) {
					t.Errorf("%s: %s's description says the default is %q; scrollback %s --%s says %q", where, e.Name, m[1], cmdName, f.Name, want)
				}
			}
		}
		if p.RegistryType == "npm" {
			for name, f := range read {
				if !listed[name] && !strings.HasPrefix(f.Usage, "with --http") {
					t.Errorf("%s: scrollback %s reads %s (--%s), which server.json does not list", where, cmdName, name, f.Name)
				}
			}
		}
	}
}
