//go:build !unix

package filepager

import "os"

// openFile opens name for reading. Only Unix systems have named pipes in
// the file system that an open would block on.
func openFile(name string) (*os.File, error) { return os.Open(name) }

// blocking has nothing to undo where openFile opens as os.Open does.
func blocking(*os.File) error { return nil }
