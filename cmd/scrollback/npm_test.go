package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// npmPlatform is a platform scrollback publishes on npm: its npm name
// (os-cpu, as process.platform and process.arch spell them) and Go's.
type npmPlatform struct {
	npm, goos, goarch string
}

// publishedPlatforms reads the platforms that .goreleaser.yaml builds
// scrollback for (the build with id scrollback), in npm's names.
func publishedPlatforms(t *testing.T) []npmPlatform {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	start := strings.Index(text, "  - id: scrollback\n")
	if start < 0 {
		t.Fatal(".goreleaser.yaml has no build with id scrollback")
	}
	build := text[start+1:]
	if end := strings.Index(build, "\n  - id:"); end >= 0 {
		build = build[:end]
	}
	list := func(key string) []string {
		m := regexp.MustCompile(`(?m)^\s+` + key + `: \[([^\]]*)\]`).FindStringSubmatch(build)
		if m == nil {
			t.Fatalf(".goreleaser.yaml's scrollback build has no %s list", key)
		}
		return strings.Split(strings.ReplaceAll(m[1], " ", ""), ",")
	}
	npmOS := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}
	npmCPU := map[string]string{"amd64": "x64", "arm64": "arm64"}
	var ps []npmPlatform
	for _, goos := range list("goos") {
		for _, goarch := range list("goarch") {
			if npmOS[goos] == "" || npmCPU[goarch] == "" {
				t.Fatalf("no npm name for %s/%s", goos, goarch)
			}
			ps = append(ps, npmPlatform{npmOS[goos] + "-" + npmCPU[goarch], goos, goarch})
		}
	}
	if len(ps) < 6 {
		t.Fatalf("read %d platforms from .goreleaser.yaml, want at least 6: %v", len(ps), ps)
	}
	return ps
}

func nodeOrSkip(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	return node
}

// TestNPMLauncherPlatforms checks that every platform the release builds
// has its package in the launcher's table, in the launcher package's
// optional dependencies and in npm/build.mjs; and, with node, that the
// launcher on each runs that package's binary.
func TestNPMLauncherPlatforms(t *testing.T) {
	published := publishedPlatforms(t)
	launcherJS, err := os.ReadFile(filepath.Join("..", "..", "npm", "scrollback", "bin", "scrollback.js"))
	if err != nil {
		t.Fatal(err)
	}
	launcher := map[string]string{} // "os cpu" -> package
	for _, m := range regexp.MustCompile(`'(\w+ \w+)': '(@scrollback/[\w-]+)'`).FindAllStringSubmatch(string(launcherJS), -1) {
		launcher[m[1]] = m[2]
	}
	var pkg struct {
		Optional map[string]string `json:"optionalDependencies"`
	}
	readJSON(t, filepath.Join("..", "..", "npm", "scrollback", "package.json"), &pkg)
	buildMJS, err := os.ReadFile(filepath.Join("..", "..", "npm", "build.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, p := range published {
		name := "@scrollback/" + p.npm
		want[name] = true
		if got := launcher[strings.Replace(p.npm, "-", " ", 1)]; got != name {
			t.Errorf("the launcher maps %s to %q, want %s", strings.Replace(p.npm, "-", " ", 1), got, name)
		}
		if _, ok := pkg.Optional[name]; !ok {
			t.Errorf("npm/scrollback/package.json does not depend on %s", name)
		}
		entry := fmt.Sprintf("'%s': { goos: '%s', goarch: '%s'", p.npm, p.goos, p.goarch)
		if !strings.Contains(string(buildMJS), entry) {
			t.Errorf("npm/build.mjs does not build %s: want %q in it", name, entry)
		}
	}
	for key, name := range launcher {
		if !want[name] {
			t.Errorf("the launcher maps %s to %s, which the release does not build", key, name)
		}
	}
	for name := range pkg.Optional {
		if !want[name] {
			t.Errorf("npm/scrollback/package.json depends on %s, which the release does not build", name)
		}
	}

	// Run the launcher as each platform would: a fake process.platform and
	// process.arch, and a package whose "binary" says which it is.
	node := nodeOrSkip(t)
	dir := t.TempDir()
	modules := filepath.Join(dir, "node_modules")
	for _, p := range published {
		exe := "scrollback"
		if p.goos == "windows" {
			exe += ".exe"
		}
		bin := filepath.Join(modules, "@scrollback", p.npm, "bin", exe)
		if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, []byte("#!/bin/sh\necho "+p.npm+" \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(modules, "scrollback", "bin", "scrollback.js")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, launcherJS, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("sh"); err != nil || runtime.GOOS == "windows" {
		t.Skip("no sh scripts to stand in for the binaries")
	}
	for _, p := range published {
		t.Run(p.npm, func(t *testing.T) {
			goos, arch, _ := strings.Cut(p.npm, "-")
			fake := fmt.Sprintf("Object.defineProperty(process, 'platform', {value: %q}); Object.defineProperty(process, 'arch', {value: %q}); process.argv = [process.argv[0], %q, 'mcp']; require(%q);", goos, arch, script, script)
			cmd := exec.Command(node, "-e", fake)
			cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "SCROLLBACK_BINARY=") })
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the launcher as %s: %v\n%s", p.npm, err, out)
			}
			if got, want := strings.TrimSpace(string(out)), p.npm+" mcp"; got != want {
				t.Errorf("the launcher as %s ran %q, want %q", p.npm, got, want)
			}
		})
	}
}

// TestNPMBuildFromDist builds the npm packages from a fake GoReleaser dist
// whose artifacts.json lists, for every platform, the scrollback binary and
// the eval harness's (scrollback-eval, before and after it), and checks
// that each platform package holds scrollback's.
func TestNPMBuildFromDist(t *testing.T) {
	node := nodeOrSkip(t)
	published := publishedPlatforms(t)
	dir := t.TempDir()
	type artifact struct {
		Name   string         `json:"name"`
		Path   string         `json:"path"`
		GOOS   string         `json:"goos"`
		GOARCH string         `json:"goarch"`
		Type   string         `json:"type"`
		Extra  map[string]any `json:"extra"`
	}
	var list []artifact
	add := func(id string, p npmPlatform) {
		ext := ""
		if p.goos == "windows" {
			ext = ".exe"
		}
		path := filepath.Join("dist", fmt.Sprintf("%s_%s_%s", id, p.goos, p.goarch), id+ext)
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(id+" "+p.goos+"/"+p.goarch), 0o755); err != nil {
			t.Fatal(err)
		}
		list = append(list, artifact{id + ext, filepath.ToSlash(path), p.goos, p.goarch, "Binary",
			map[string]any{"Binary": id, "Ext": ext, "ID": id}})
	}
	for i, p := range published {
		if i%2 == 0 {
			add("scrollback", p)
			add("scrollback-eval", p)
		} else {
			add("scrollback-eval", p)
			add("scrollback", p)
		}
	}
	// The archives name the platform too; they are not binaries.
	list = append(list, artifact{"scrollback_1.2.3_linux_amd64.tar.gz", "dist/scrollback_1.2.3_linux_amd64.tar.gz", "linux", "amd64", "Archive", nil})
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dist", "artifacts.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	buildMJS, err := filepath.Abs(filepath.Join("..", "..", "npm", "build.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, buildMJS, "--dist", "dist", "--version", "1.2.3", "--out", "out")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node npm/build.mjs --dist: %v\n%s", err, out)
	}

	var launcher struct {
		Version  string            `json:"version"`
		Optional map[string]string `json:"optionalDependencies"`
	}
	readJSON(t, filepath.Join(dir, "out", "scrollback", "package.json"), &launcher)
	if launcher.Version != "1.2.3" {
		t.Errorf("the launcher package is version %q, want 1.2.3", launcher.Version)
	}
	for _, p := range published {
		exe := "scrollback"
		if p.goos == "windows" {
			exe += ".exe"
		}
		got, err := os.ReadFile(filepath.Join(dir, "out", p.npm, "bin", exe))
		if err != nil {
			t.Errorf("@scrollback/%s: %v", p.npm, err)
			continue
		}
		if want := "scrollback " + p.goos + "/" + p.goarch; string(got) != want {
			t.Errorf("@scrollback/%s holds %q, want %q", p.npm, got, want)
		}
		var pkg struct {
			Name    string   `json:"name"`
			Version string   `json:"version"`
			OS      []string `json:"os"`
			CPU     []string `json:"cpu"`
		}
		readJSON(t, filepath.Join(dir, "out", p.npm, "package.json"), &pkg)
		npmOS, cpu, _ := strings.Cut(p.npm, "-")
		if pkg.Name != "@scrollback/"+p.npm || pkg.Version != "1.2.3" || !slices.Equal(pkg.OS, []string{npmOS}) || !slices.Equal(pkg.CPU, []string{cpu}) {
			t.Errorf("@scrollback/%s's package.json: %+v", p.npm, pkg)
		}
		if v := launcher.Optional["@scrollback/"+p.npm]; v != "1.2.3" {
			t.Errorf("the launcher depends on @scrollback/%s@%q, want 1.2.3", p.npm, v)
		}
	}
	if len(launcher.Optional) != len(published) {
		t.Errorf("the launcher depends on %v, want the %d published platforms", slices.Sorted(maps.Keys(launcher.Optional)), len(published))
	}
}
