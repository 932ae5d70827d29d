package cli

import (
	"errors"
	"strings"
	"testing"
)

func TestDefaultDBPathPerPlatform(t *testing.T) {
	noHome := func() (string, error) { return "", errors.New("$HOME is not defined") }
	home := func(h string) func() (string, error) { return func() (string, error) { return h, nil } }
	tests := []struct {
		name     string
		goos     string
		env      map[string]string
		home     func() (string, error)
		existing string // the one file that exists
		want     string
		wantErr  string
	}{
		{name: "linux", goos: "linux", env: map[string]string{"HOME": "/home/u"}, home: noHome,
			want: "/home/u/.local/state/scrollback/scrollback.db"},
		{name: "linux XDG_STATE_HOME wins", goos: "linux", env: map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/xdg"}, home: noHome,
			want: "/xdg/scrollback/scrollback.db"},
		{name: "linux relative XDG_STATE_HOME is ignored", goos: "linux", env: map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "state"}, home: noHome,
			want: "/home/u/.local/state/scrollback/scrollback.db"},
		{name: "linux without $HOME", goos: "linux", home: home("/root"),
			want: "/root/.local/state/scrollback/scrollback.db"},
		{name: "freebsd", goos: "freebsd", env: map[string]string{"HOME": "/home/u"}, home: noHome,
			want: "/home/u/.local/state/scrollback/scrollback.db"},
		{name: "macOS", goos: "darwin", env: map[string]string{"HOME": "/Users/u"}, home: noHome,
			want: "/Users/u/.local/state/scrollback/scrollback.db"},
		{name: "macOS keeps an earlier release's database", goos: "darwin", env: map[string]string{"HOME": "/Users/u"}, home: noHome,
			existing: "/Users/u/Library/Application Support/scrollback/scrollback.db",
			want:     "/Users/u/Library/Application Support/scrollback/scrollback.db"},
		{name: "linux has no earlier place", goos: "linux", env: map[string]string{"HOME": "/home/u"}, home: noHome,
			existing: "/home/u/Library/Application Support/scrollback/scrollback.db",
			want:     "/home/u/.local/state/scrollback/scrollback.db"},
		{name: "macOS XDG_STATE_HOME wins", goos: "darwin", env: map[string]string{"HOME": "/Users/u", "XDG_STATE_HOME": "/Users/u/.local/state"}, home: noHome,
			want: "/Users/u/.local/state/scrollback/scrollback.db"},
		{name: "windows", goos: "windows", env: map[string]string{"LOCALAPPDATA": `C:\Users\u\AppData\Local`, "USERPROFILE": `C:\Users\u`}, home: noHome,
			want: `C:\Users\u\AppData\Local\scrollback\scrollback.db`},
		{name: "windows XDG_STATE_HOME wins", goos: "windows", env: map[string]string{"LOCALAPPDATA": `C:\Users\u\AppData\Local`, "XDG_STATE_HOME": `D:\state\`}, home: noHome,
			want: `D:\state\scrollback\scrollback.db`},
		{name: "windows without LOCALAPPDATA", goos: "windows", env: map[string]string{"USERPROFILE": `C:\Users\u`}, home: noHome,
			want: `C:\Users\u\AppData\Local\scrollback\scrollback.db`},
		{name: "windows ignores a Unix HOME", goos: "windows", env: map[string]string{"HOME": "/home/u"}, home: home(`C:\Users\v`),
			want: `C:\Users\v\AppData\Local\scrollback\scrollback.db`},
		{name: "windows UNC LOCALAPPDATA", goos: "windows", env: map[string]string{"LOCALAPPDATA": `\\server\share\u`}, home: noHome,
			want: `\\server\share\u\scrollback\scrollback.db`},
		{name: "no home anywhere", goos: "linux", home: noHome,
			wantErr: "cannot find a place for the database: set --db or $SCROLLBACK_DB"},
		{name: "no home on windows", goos: "windows", home: noHome,
			wantErr: "set --db or $SCROLLBACK_DB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exists := func(p string) bool { return p != "" && p == tt.existing }
			got, err := defaultDBPath(tt.goos, func(k string) string { return tt.env[k] }, tt.home, exists)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("defaultDBPath = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// $SCROLLBACK_DB wins over every platform default.
func TestSCROLLBACKDBWins(t *testing.T) {
	b := &base{io: IO{Getenv: func(k string) string {
		return map[string]string{"SCROLLBACK_DB": "/tmp/x.db", "XDG_STATE_HOME": "/xdg", "LOCALAPPDATA": `C:\x`}[k]
	}}}
	if got, err := b.dbTarget(); err != nil || got != "/tmp/x.db" {
		t.Errorf("dbTarget = %q, %v; want /tmp/x.db", got, err)
	}
}
