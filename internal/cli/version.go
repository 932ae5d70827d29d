package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

func init() {
	register(commandInfo{name: "version", order: 100,
		usage:   "version [--json]",
		summary: "print the version, the commit and the time scrollback was built from, and its Go and platform",
		examples: []example{
			{"which scrollback is this", "scrollback version"},
			{"the same as JSON, for a script", "scrollback version --json"},
		},
		make: func(io IO) command { return &versionCmd{base: base{io: io}} }})
}

// versionCmd is `scrollback version` (also `scrollback --version`).
type versionCmd struct{ base }

func (c *versionCmd) Run(ctx context.Context, args []string) error {
	c.fs = newFlagSet("version")
	c.fs.BoolVar(&c.json, "json", false, "print the build information as a JSON object (default: one line of text)")
	pos, err := c.parse(args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("version takes no arguments, got %q", pos)
	}
	if c.json {
		return printJSON(c.io.Stdout, Build())
	}
	_, err = fmt.Fprintln(c.io.Stdout, Build())
	return err
}

// Stamped at release time by the linker (see .goreleaser.yaml):
//
//	-X github.com/scrollback-dev/scrollback/internal/cli.version=v1.2.3
//	-X github.com/scrollback-dev/scrollback/internal/cli.commit=<full hash>
//	-X github.com/scrollback-dev/scrollback/internal/cli.date=<RFC 3339 time>
//
// Left empty, they are read from the build information Go records in every
// binary (the module version for go install, the VCS revision and time for a
// build in a clone).
var version, commit, date string

// Version returns the version the binary was built as: the stamped
// release version, else the module version Go recorded (go install
// ...@v1.2.3), else "(devel)".
func Version() string {
	return buildVersion(version, readBuildInfo())
}

// BuildInfo is what `scrollback version` prints: the version, the commit
// and the time it was built from, and the Go toolchain and platform.
type BuildInfo struct {
	Version  string `json:"version"`  // "v1.2.3", or "(devel)"
	Commit   string `json:"commit"`   // the VCS revision; "" when unknown; "+dirty" marks uncommitted changes
	Date     string `json:"date"`     // the commit's or the build's time, RFC 3339; "" when unknown
	Go       string `json:"go"`       // "go1.26.8"
	Platform string `json:"platform"` // "darwin/arm64"
}

// String is the one line `scrollback version` prints:
// "scrollback v1.2.3 (commit 0123abc, 2026-12-01T10:00:00Z, go1.26.8 darwin/arm64)".
func (b BuildInfo) String() string {
	var extra []string
	if b.Commit != "" {
		extra = append(extra, "commit "+b.Commit)
	}
	if b.Date != "" {
		extra = append(extra, b.Date)
	}
	extra = append(extra, b.Go+" "+b.Platform)
	return fmt.Sprintf("scrollback %s (%s)", b.Version, strings.Join(extra, ", "))
}

// Build returns this binary's BuildInfo: the stamped values where the
// release stamped them, else those of debug.ReadBuildInfo.
func Build() BuildInfo {
	return buildInfo(version, commit, date, readBuildInfo())
}

func readBuildInfo() *debug.BuildInfo {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi
	}
	return nil
}

func buildVersion(stamped string, bi *debug.BuildInfo) string {
	if stamped != "" {
		if !strings.HasPrefix(stamped, "v") && stamped[0] >= '0' && stamped[0] <= '9' {
			stamped = "v" + stamped // GoReleaser's {{.Version}} has no "v"
		}
		return stamped
	}
	if bi != nil && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// buildInfo fills in a BuildInfo from the stamped values, each falling
// back on what Go recorded in bi (nil when there is none).
func buildInfo(stampedVersion, stampedCommit, stampedDate string, bi *debug.BuildInfo) BuildInfo {
	b := BuildInfo{
		Version:  buildVersion(stampedVersion, bi),
		Commit:   stampedCommit,
		Date:     stampedDate,
		Go:       runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
	if bi == nil {
		return b
	}
	if bi.GoVersion != "" {
		b.Go = bi.GoVersion
	}
	var revision, vcsTime string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.time":
			vcsTime = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if b.Commit == "" && revision != "" {
		b.Commit = revision[:min(12, len(revision))]
		if modified {
			b.Commit += "+dirty"
		}
	}
	if b.Date == "" {
		b.Date = vcsTime
	}
	return b
}
