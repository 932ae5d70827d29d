package filepager

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinks is how many symlinks a path may pass through before its
// resolution is taken for a loop: filepath.EvalSymlinks's limit.
const maxLinks = 255

// loopError is a symlink loop met at the link at.
type loopError struct{ at string }

func (e *loopError) Error() string { return "symlink loop at " + e.at }

// resolvePartial follows the symlinks of the absolute, clean path abs as
// filepath.EvalSymlinks does, for a path that EvalSymlinks could not
// resolve. It returns where abs leads: the resolved part that exists,
// joined with the rest as written, and the error that stopped the walk
// (a *loopError, or the error of os.Lstat). Where it leads tells whether a
// path that does not exist lies outside the root, so that a missing path
// is refused as an existing one would be.
func resolvePartial(abs string) (string, error) {
	const sep = string(filepath.Separator)
	vol := filepath.VolumeName(abs)
	dest, rest := vol+sep, abs[len(vol):]
	for links := 0; ; {
		rest = strings.TrimLeft(rest, sep)
		if rest == "" {
			return filepath.Clean(dest), nil
		}
		name, after, _ := strings.Cut(rest, sep)
		rest = after
		switch name {
		case ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		next := filepath.Join(dest, name)
		fi, err := os.Lstat(next)
		if err != nil {
			return filepath.Join(next, rest), err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			dest = next
			continue
		}
		if links++; links > maxLinks {
			return next, &loopError{at: next}
		}
		link, err := os.Readlink(next)
		if err != nil {
			return filepath.Join(next, rest), err
		}
		if filepath.IsAbs(link) {
			v := filepath.VolumeName(link)
			dest, link = v+sep, link[len(v):]
		}
		rest = link + sep + rest
	}
}

// unresolved is the error for the absolute path given, which
// filepath.EvalSymlinks could not resolve with err: outside the root when
// it leads there (whether or not it exists), a symlink loop, or missing.
func (p *Pager) unresolved(given string, err error) *Error {
	at, werr := resolvePartial(given)
	if p.root != "" && !p.within(at) {
		return p.outside(at)
	}
	var loop *loopError
	switch {
	case errors.As(werr, &loop):
		return &Error{Op: "open", Err: fmt.Errorf("%w at %s", ErrLoop, shortPath(loop.at)), Hint: "fix or remove the link, or read the file by a path that does not pass through it"}
	case errors.Is(err, fs.ErrNotExist), errors.Is(werr, fs.ErrNotExist):
		return &Error{Op: "open", Err: ErrNotFound, Hint: "check the path; list the directory (ls) to find the name"}
	}
	return &Error{Op: "open", Err: err}
}

// within reports whether the absolute, clean path abs lies in the root.
func (p *Pager) within(abs string) bool {
	rel, err := filepath.Rel(p.root, abs)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// outside is the error for a path that leads to abs, outside the root:
// the same words whether or not abs exists.
func (p *Pager) outside(abs string) *Error {
	return &Error{Op: "open", Err: fmt.Errorf("%w: %s is outside %s", ErrOutsideRoot, shortPath(abs), p.root), Hint: "read files under " + p.root + " only"}
}
