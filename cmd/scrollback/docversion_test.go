package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocumentedGoVersion checks that the Go version the documents ask for
// ("Go X or later") is go.mod's go directive, the least the module builds
// with, and that the versions they and the Dockerfile say it is tested or
// built with are of the same release (major.minor).
func TestDocumentedGoVersion(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+(?:\.\d+)?)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod has no go directive")
	}
	want := string(m[1])
	release := strings.Join(strings.SplitN(want, ".", 3)[:2], ".")

	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join("..", "..", "README.md")}, files...)
	least := regexp.MustCompile(`\bGo (\d+\.\d+(?:\.\d+)?) or later`)
	tested := regexp.MustCompile(`\btested with Go (\d+\.\d+(?:\.\d+)?)`)
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.ReplaceAll(string(b), "\n", " ")
		for _, m := range least.FindAllStringSubmatch(text, -1) {
			found++
			if m[1] != want {
				t.Errorf("%s: %q, but go.mod asks for go %s: write Go %s or later", filepath.Base(f), m[0], want, want)
			}
		}
		for _, m := range tested.FindAllStringSubmatch(text, -1) {
			if m[1] != release && !strings.HasPrefix(m[1], release+".") {
				t.Errorf("%s: %q, but go.mod is go %s", filepath.Base(f), m[0], want)
			}
		}
	}
	if found == 0 {
		t.Error("README.md and docs/ state no Go version (Go X or later): the install section needs one")
	}
	dockerfile, err := os.ReadFile(filepath.Join("..", "..", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if d := regexp.MustCompile(`ARG GO_VERSION=(\S+)`).FindSubmatch(dockerfile); d == nil || (string(d[1]) != release && !strings.HasPrefix(string(d[1]), release+".")) {
		t.Errorf("the Dockerfile's GO_VERSION is not of go.mod's release %s (go %s)", release, want)
	}
}

// TestDocumentedMacOSInstall checks that the README's macOS install
// paragraph covers both Macs the release builds for: Apple silicon and
// Intel, each with its npm package.
func TestDocumentedMacOSInstall(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n**On macOS**")
	if !ok {
		t.Fatal("README.md has no **On macOS** install paragraph")
	}
	if i := strings.Index(section, "\n**"); i >= 0 {
		section = section[:i]
	}
	for _, want := range []string{"Apple silicon", "Intel", "brew install", "npx -y scrollback"} {
		if !strings.Contains(section, want) {
			t.Errorf("README.md's macOS paragraph does not mention %q", want)
		}
	}
	for _, p := range publishedPlatforms(t) {
		if p.goos == "darwin" && !strings.Contains(section, "@scrollback/"+p.npm) {
			t.Errorf("README.md's macOS paragraph does not name @scrollback/%s, the package for %s/%s", p.npm, p.goos, p.goarch)
		}
	}
}
