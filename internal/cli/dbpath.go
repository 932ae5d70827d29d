package cli

import (
	"fmt"
	"path/filepath"
	"strings"
)

// defaultDBPath is DefaultDBPath for the system goos (a runtime.GOOS
// value), with the environment, the home directory and a file's existence
// as parameters so that every platform's rule can be tested on any one.
func defaultDBPath(goos string, getenv func(string) string, userHome func() (string, error), exists func(string) bool) (string, error) {
	if dir := getenv("XDG_STATE_HOME"); dir != "" && isAbs(goos, dir) {
		return join(goos, dir, "scrollback", "scrollback.db"), nil
	}
	if goos == "windows" {
		if dir := getenv("LOCALAPPDATA"); dir != "" && isAbs(goos, dir) {
			return join(goos, dir, "scrollback", "scrollback.db"), nil
		}
	}
	home := getenv("HOME")
	if goos == "windows" {
		home = getenv("USERPROFILE")
	}
	if home == "" || !isAbs(goos, home) {
		h, err := userHome()
		if err != nil {
			return "", fmt.Errorf("cannot find a place for the database: set --db or $SCROLLBACK_DB (%v)", err)
		}
		home = h
	}
	switch goos {
	case "darwin", "ios":
		// Releases before the contract's path was followed on macOS kept
		// the database here: a user who has one keeps its sessions.
		if old := join(goos, home, "Library", "Application Support", "scrollback", "scrollback.db"); exists(old) {
			return old, nil
		}
	case "windows":
		return join(goos, home, "AppData", "Local", "scrollback", "scrollback.db"), nil
	}
	return join(goos, home, ".local", "state", "scrollback", "scrollback.db"), nil
}

// isAbs is filepath.IsAbs for goos.
func isAbs(goos, p string) bool {
	if goos != "windows" {
		return strings.HasPrefix(p, "/")
	}
	if strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//") { // UNC
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		('a' <= p[0]|0x20 && p[0]|0x20 <= 'z')
}

// join is filepath.Join for goos: on this system it is filepath.Join
// itself; for Windows tested elsewhere, the parts are joined with '\'.
func join(goos, dir string, elem ...string) string {
	if goos != "windows" || filepath.Separator == '\\' {
		return filepath.Join(append([]string{dir}, elem...)...)
	}
	return strings.TrimRight(dir, `\/`) + `\` + strings.Join(elem, `\`)
}
