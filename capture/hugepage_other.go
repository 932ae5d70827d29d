//go:build !linux

package capture

func hugeBuffer(n int) []byte { return make([]byte, 0, n) }
