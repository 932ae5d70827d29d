package cli

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildInfo(t *testing.T) {
	recorded := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/scrollback-dev/scrollback", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-11-30T12:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	plat := runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  BuildInfo
		wantLine              string
	}{
		{
			name: "stamped by the release", version: "1.2.3", commit: "fedcba9876543210", date: "2026-12-01T10:00:00Z", bi: recorded,
			want:     BuildInfo{Version: "v1.2.3", Commit: "fedcba9876543210", Date: "2026-12-01T10:00:00Z", Go: "go1.26.8", Platform: plat},
			wantLine: "scrollback v1.2.3 (commit fedcba9876543210, 2026-12-01T10:00:00Z, go1.26.8 " + plat + ")",
		},
		{
			name: "recorded by go", bi: recorded,
			want:     BuildInfo{Version: "v0.3.0", Commit: "0123456789ab+dirty", Date: "2026-11-30T12:00:00Z", Go: "go1.26.8", Platform: plat},
			wantLine: "scrollback v0.3.0 (commit 0123456789ab+dirty, 2026-11-30T12:00:00Z, go1.26.8 " + plat + ")",
		},
		{
			name: "go install without VCS", bi: &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.4.0"}},
			want:     BuildInfo{Version: "v0.4.0", Go: "go1.26.8", Platform: plat},
			wantLine: "scrollback v0.4.0 (go1.26.8 " + plat + ")",
		},
		{
			name: "nothing known", bi: nil,
			want:     BuildInfo{Version: "(devel)", Go: runtime.Version(), Platform: plat},
			wantLine: "scrollback (devel) (" + runtime.Version() + " " + plat + ")",
		},
		{
			name: "a snapshot version is kept as stamped", version: "0.0.0-SNAPSHOT-abc1234", bi: nil,
			want:     BuildInfo{Version: "v0.0.0-SNAPSHOT-abc1234", Go: runtime.Version(), Platform: plat},
			wantLine: "scrollback v0.0.0-SNAPSHOT-abc1234 (" + runtime.Version() + " " + plat + ")",
		},
		{
			name: "a stamped version that is not a number", version: "nightly", bi: nil,
			want:     BuildInfo{Version: "nightly", Go: runtime.Version(), Platform: plat},
			wantLine: "scrollback nightly (" + runtime.Version() + " " + plat + ")",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := buildInfo(tt.version, tt.commit, tt.date, tt.bi)
			if got != tt.want {
				t.Errorf("buildInfo = %+v\nwant %+v", got, tt.want)
			}
			if got.String() != tt.wantLine {
				t.Errorf("line = %q\nwant %q", got.String(), tt.wantLine)
			}
			if v := buildVersion(tt.version, tt.bi); v != tt.want.Version {
				t.Errorf("buildVersion = %q, want %q", v, tt.want.Version)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		var out strings.Builder
		if code := Main(t.Context(), []string{arg}, IO{Stdout: &out, Getenv: func(string) string { return "" }}); code != 0 {
			t.Fatalf("%s: exit %d", arg, code)
		}
		if !strings.HasPrefix(out.String(), "scrollback ") || !strings.Contains(out.String(), runtime.GOOS+"/"+runtime.GOARCH+")\n") {
			t.Errorf("%s printed %q", arg, out.String())
		}
	}
}
