package cli

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docFiles are the documents that describe the command line: README.md
// and docs/*.md, relative to this package.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join("..", "..", "README.md")}, files...)
	if len(files) < 5 {
		t.Fatalf("found %d documents: %v", len(files), files)
	}
	return files
}

// paragraphs splits a Markdown text into its paragraphs, a table row or a
// list item each being one too.
func paragraphs(text string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			flush()
		case strings.HasPrefix(trimmed, "|"), strings.HasPrefix(trimmed, "- "), strings.HasPrefix(trimmed, "* "):
			flush()
			cur = append(cur, line)
		default:
			cur = append(cur, line)
		}
	}
	flush()
	return out
}

// allHelp is every command's help, as `scrollback help COMMAND` prints it.
func allHelp(t *testing.T) string {
	t.Helper()
	stdio := IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	var b bytes.Buffer
	for _, c := range commands {
		printHelp(&b, c, helpFlags(context.Background(), c, stdio))
		b.WriteString("\n\n")
	}
	return b.String()
}

// TestTokenEnvDocumented: $SCROLLBACK_TOKEN holds a token, not the name of
// a token file (serve.go, readTokens). Wherever the documents or the help
// mention it beside the token file, they must say it is the token itself.
func TestTokenEnvDocumented(t *testing.T) {
	// In the help, each line (a flag's) is a paragraph.
	texts := map[string]string{"help": strings.ReplaceAll(allHelp(t), "\n", "\n\n")}
	for _, f := range docFiles(t) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(b)
	}
	nearFile := regexp.MustCompile(`(?i)token[- ]file|one a line`)
	checked := 0
	for name, text := range texts {
		for _, p := range paragraphs(text) {
			if !strings.Contains(p, "SCROLLBACK_TOKEN") || !nearFile.MatchString(p) {
				continue
			}
			checked++
			if !strings.Contains(p, "the token itself") {
				t.Errorf("%s: beside the token file, $SCROLLBACK_TOKEN must be said to hold the token itself:\n%s", name, p)
			}
		}
	}
	if checked < 3 {
		t.Errorf("checked %d mentions of $SCROLLBACK_TOKEN beside the token file; want the help's, docs/mcp.md's and docs/operations.md's at least", checked)
	}
}

// codeSegments returns the code of a Markdown text: each inline code span,
// and each command of a fenced block (lines ending in \ joined).
func codeSegments(text string) []string {
	var segs []string
	fenced := regexp.MustCompile("(?ms)^\\s*```[^\\n]*\\n(.*?)^\\s*```")
	for _, m := range fenced.FindAllStringSubmatch(text, -1) {
		for _, line := range strings.Split(strings.ReplaceAll(m[1], "\\\n", " "), "\n") {
			segs = append(segs, line)
		}
	}
	prose := fenced.ReplaceAllString(text, "")
	for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(prose, -1) {
		segs = append(segs, strings.ReplaceAll(m[1], "\n", " "))
	}
	return segs
}

// flagsIn returns the --flags of a command line's words, up to the end of
// scrollback's own (a "--", a pipe, a ; or &&, a comment).
func flagsIn(line string) []string {
	for _, stop := range []string{" -- ", " | ", ";", "&&", " #", "`"} {
		if i := strings.Index(line, stop); i >= 0 {
			line = line[:i]
		}
	}
	line = strings.TrimSuffix(strings.TrimSpace(line), " --")
	var names []string
	for _, m := range regexp.MustCompile(`(?:^|[\s\[(])--([a-z][a-z0-9-]*)`).FindAllStringSubmatch(line, -1) {
		names = append(names, m[1])
	}
	return names
}

// undocumentedOK are the flags the documents may name for a command that
// its flag set lacks, each with why.
var undocumentedOK = map[string]string{
	"mcp --method":    "the MCP Inspector's --cli flags, after the server command it starts (docs/mcp.md)",
	"mcp --tool-name": "the MCP Inspector's --cli flags, after the server command it starts (docs/mcp.md)",
	"mcp --tool-arg":  "the MCP Inspector's --cli flags, after the server command it starts (docs/mcp.md)",
}

// docCommands maps a document to the commands whose flags its flag lists
// (a list item or table row that starts with a --flag) describe: the flag
// must be one of theirs.
var docCommands = map[string][]string{
	"mcp.md":        {"mcp"},
	"proxy.md":      {"proxy"},
	"operations.md": {"mcp", "proxy"},
}

// TestDocumentedFlagsExist checks that every --flag the documents give a
// subcommand is one of its flags: in a command line (scrollback CMD ...
// --flag, in code) and in the flag lists of the documents of one command
// (docCommands).
func TestDocumentedFlagsExist(t *testing.T) {
	stdio := IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }}
	flagSets := map[string]map[string]bool{}
	for _, c := range commands {
		fs := helpFlags(context.Background(), c, stdio)
		if fs == nil {
			continue // eval: its flags are the harness's (docs/eval.md)
		}
		names := map[string]bool{"help": true, "h": true}
		fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
		flagSets[c.name] = names
	}
	has := func(cmds []string, name string) bool {
		for _, c := range cmds {
			if flagSets[c][name] {
				return true
			}
			if _, ok := undocumentedOK[c+" --"+name]; ok {
				return true
			}
		}
		return false
	}
	checked := 0
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		base := filepath.Base(file)
		cmdLine := regexp.MustCompile(`\bscrollback ([a-z]+)\b(.*)`)
		for _, seg := range codeSegments(text) {
			for _, m := range cmdLine.FindAllStringSubmatch(seg, -1) {
				if flagSets[m[1]] == nil {
					continue // not a command, or eval
				}
				for _, name := range flagsIn(m[2]) {
					checked++
					if !has([]string{m[1]}, name) {
						t.Errorf("%s: `%s` names --%s, which scrollback %s does not have", base, strings.TrimSpace(seg), name, m[1])
					}
				}
			}
		}
		cmds := docCommands[base]
		if cmds == nil {
			continue
		}
		lead := regexp.MustCompile("^(?:\\s*(?:,|and)?\\s*`[^`]*`)+")
		for _, p := range paragraphs(text) {
			p = strings.TrimSpace(p)
			var head string
			switch {
			case strings.HasPrefix(p, "| `--"):
				head = strings.SplitN(strings.ReplaceAll(p, `\|`, "/"), "|", 3)[1]
			case strings.HasPrefix(p, "- `--"):
				head = lead.FindString(strings.ReplaceAll(p[2:], "\n", " "))
			default:
				continue
			}
			for _, m := range regexp.MustCompile("`--([a-z][a-z0-9-]*)").FindAllStringSubmatch(head, -1) {
				checked++
				if !has(cmds, m[1]) {
					t.Errorf("%s: the flag list names --%s, which scrollback %s does not have", base, m[1], strings.Join(cmds, " or "))
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("checked %d documented flags; the documents name far more: the parsing missed them", checked)
	}
	t.Logf("checked %d documented flags", checked)
}
