//go:build !linux

package capture

func adviseHuge([]byte) {}
