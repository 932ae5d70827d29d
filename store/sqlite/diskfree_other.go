//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sqlite

// diskFree is not known here (Windows, and the rest): Stats leaves it out.
func diskFree(dir string) (int64, bool) { return 0, false }
