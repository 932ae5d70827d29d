//go:build unix

package filepager

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Pipes, sockets and devices are refused with a message that names the
// kind of file, never opened for a read that could block.
func TestSpecialFilesRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// A socket path must be short; the test's temporary directory may not be.
	sdir, err := os.MkdirTemp("", "sb")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sdir)
	sock := filepath.Join(sdir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tests := []struct{ path, kind string }{
		{fifo, "a named pipe (FIFO)"},
		{sock, "a socket"},
		{"/dev/null", "a character device"},
	}
	p := New(Options{})
	for _, tt := range tests {
		_, err := read(t, p, tt.path)
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "it is "+tt.kind) {
			t.Errorf("%s: err = %v, want ErrNotRegular naming %q", tt.path, err, tt.kind)
		}
	}
}

// A regular file swapped for a named pipe between the checks and the open
// is refused, not opened for a read that blocks until a writer comes.
func TestSwappedForPipe(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "f.txt", []byte("hello\n"))
	p := New(Options{})
	p.beforeOpen = func(resolved string) {
		if err := os.Remove(resolved); err != nil {
			t.Error(err)
		}
		if err := syscall.Mkfifo(resolved, 0o600); err != nil {
			t.Error(err)
		}
	}
	_, err := read(t, p, path)
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a named pipe (FIFO)") {
		t.Fatalf("err = %v, want ErrNotRegular naming a named pipe", err)
	}
}

// read reads path's first page, failing the test if the read hangs (it
// then opens the pipe for writing, which ends a blocked open).
func read(t *testing.T, p *Pager, path string) (Page, error) {
	t.Helper()
	type result struct {
		pg  Page
		err error
	}
	done := make(chan result, 1)
	go func() {
		pg, err := p.Read(context.Background(), Request{Path: path})
		done <- result{pg, err}
	}()
	select {
	case r := <-done:
		return r.pg, r.err
	case <-time.After(20 * time.Second):
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatalf("%s: the read blocked", path)
		return Page{}, nil
	}
}
