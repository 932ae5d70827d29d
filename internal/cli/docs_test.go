package cli

import (
	"bytes"
	"context"
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
