//go:build !linux

package procgroup

import "os"

// tunePipe does nothing: only Linux lets a pipe's buffer be resized.
func tunePipe(*os.File, int) {}
