package main

import (
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// badDeps are the packages the scrollback binary must not link (each a
// prefix: the package and those under it), with why: the model SDKs belong
// to the eval harness (cmd/scrollback-eval), whose weight every scrollback
// process would otherwise carry (a binary three times the size, a slower
// start, more resident memory). The check is tailscale's depaware idea:
// list the binary's dependencies as the go command sees them.
var badDeps = map[string]string{
	"github.com/openai/openai-go":               "a model SDK: it belongs to cmd/scrollback-eval",
	"github.com/anthropics/anthropic-sdk-go":    "a model SDK: it belongs to cmd/scrollback-eval",
	"github.com/scrollback-dev/scrollback/eval": "the eval harness: it belongs to cmd/scrollback-eval",
}

// deps lists the packages the command in dir links for goos.
func deps(t *testing.T, dir, goos string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	cmd := exec.Command(goBin, "list", "-deps", dir)
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", dir, err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 50 {
		t.Fatalf("go list -deps %s listed %d packages; too few for the check to mean anything", dir, len(pkgs))
	}
	return pkgs
}

// bad returns the packages of pkgs that badDeps names, with why.
func bad(pkgs []string) map[string]string {
	found := map[string]string{}
	for _, pkg := range pkgs {
		for prefix, why := range badDeps {
			if pkg == prefix || strings.HasPrefix(pkg, prefix+"/") {
				found[pkg] = why
			}
		}
	}
	return found
}

func TestDeps(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		t.Run(goos, func(t *testing.T) {
			for pkg, why := range bad(deps(t, ".", goos)) {
				t.Errorf("scrollback links %s: %s", pkg, why)
			}
		})
	}
}

// The check can fail: the eval harness's binary links every one of them.
func TestDepsCheckSeesTheHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	found := bad(deps(t, "../scrollback-eval", "linux"))
	for prefix := range badDeps {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(found)), func(p string) bool { return p == prefix || strings.HasPrefix(p, prefix+"/") }) {
			t.Errorf("the check did not see %s in scrollback-eval's dependencies", prefix)
		}
	}
}

// releaseTags are the build tags of every released scrollback binary:
// grpcnotrace builds gRPC without golang.org/x/net/trace (and with it
// html/template and text/template), whose package init every scrollback
// process, `scrollback version` too, would otherwise pay for; scrollback
// never turns gRPC's request tracing on.
const releaseTags = "grpcnotrace"

// releaseBuilds are the files that build the released binaries, each with
// the text that must carry releaseTags.
var releaseBuilds = map[string]string{
	"../../.goreleaser.yaml":         "tags: [" + releaseTags + "]",
	"../../Dockerfile":               "go build -tags " + releaseTags + " ",
	"../../npm/build.mjs":            "'build', '-tags', '" + releaseTags + "',",
	"../../.github/workflows/ci.yml": "go build -tags " + releaseTags + " ",
}

// TestReleaseTags checks that every release build uses releaseTags, and
// that they keep out what they are for.
func TestReleaseTags(t *testing.T) {
	for file, want := range releaseBuilds {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s does not build with the release tags: want %q in it", file, want)
		}
	}
	if testing.Short() {
		t.Skip("runs go list")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	list := func(tags string) []string {
		cmd := exec.Command(goBin, "list", "-tags", tags, "-deps", ".")
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list -tags %q: %v", tags, err)
		}
		return strings.Fields(string(out))
	}
	const trace = "golang.org/x/net/trace"
	if !slices.Contains(list(""), trace) {
		t.Fatalf("without tags scrollback does not link %s: the check below means nothing", trace)
	}
	tagged := list(releaseTags)
	for _, pkg := range []string{trace, "html/template"} {
		if slices.Contains(tagged, pkg) {
			t.Errorf("built with -tags %s, scrollback still links %s", releaseTags, pkg)
		}
	}
}
