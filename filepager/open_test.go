package filepager

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A path outside the root is refused as outside whether or not it exists,
// with the same words: the answer reveals nothing about what exists there.
func TestOutsideRootMissing(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	writeFile(t, root, "in.txt", []byte("in\n"))
	writeFile(t, dir, "out.txt", []byte("out\n"))
	for _, l := range [][2]string{
		{dir, "up"},
		{filepath.Join(dir, "out.txt"), "l-out.txt"},
		{filepath.Join(dir, "nope.txt"), "l-nope.txt"},
	} {
		if err := os.Symlink(l[0], filepath.Join(root, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	p := New(Options{Root: root})
	for _, path := range []string{
		filepath.Join(dir, "out.txt"),
		"../out.txt",
		filepath.Join(root, "up", "out.txt"),
		filepath.Join(root, "l-out.txt"),
		filepath.Join(dir, "sub", "out.txt"), // a missing directory too
	} {
		_, exists := p.Read(context.Background(), Request{Path: path})
		missing := strings.ReplaceAll(path, "out.txt", "nope.txt")
		_, gone := p.Read(context.Background(), Request{Path: missing})
		if !errors.Is(gone, ErrOutsideRoot) {
			t.Errorf("%s: err = %v, want ErrOutsideRoot", missing, gone)
			continue
		}
		if strings.Contains(path, "sub") {
			continue
		}
		if !errors.Is(exists, ErrOutsideRoot) {
			t.Errorf("%s: err = %v, want ErrOutsideRoot", path, exists)
		}
		if a, b := strings.ReplaceAll(exists.Error(), "out.txt", "nope.txt"), gone.Error(); a != b {
			t.Errorf("the messages differ:\n%s\n%s", a, b)
		}
	}
	// A missing file inside the root is missing.
	if _, err := p.Read(context.Background(), Request{Path: "nope.txt"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing inside the root: err = %v, want ErrNotFound", err)
	}
}

// A symlink loop is named as one, with the link where the walk gave up.
func TestSymlinkLoop(t *testing.T) {
	dir := t.TempDir()
	a, b, self := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "self")
	for _, l := range [][2]string{{b, a}, {a, b}, {self, self}} {
		if err := os.Symlink(l[0], l[1]); err != nil {
			t.Fatal(err)
		}
	}
	p := New(Options{})
	for _, path := range []string{a, self, filepath.Join(self, "x.txt")} {
		_, err := p.Read(context.Background(), Request{Path: path})
		if !errors.Is(err, ErrLoop) || !strings.Contains(err.Error(), "symlink loop at "+dir) {
			t.Errorf("%s: err = %v, want a symlink loop in %s", path, err, dir)
		}
	}
	// Inside a root, a loop is a loop too.
	if _, err := New(Options{Root: dir}).Read(context.Background(), Request{Path: "self"}); !errors.Is(err, ErrLoop) {
		t.Errorf("in the root: err = %v, want ErrLoop", err)
	}
}
