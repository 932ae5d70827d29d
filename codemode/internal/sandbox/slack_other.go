//go:build !linux

package sandbox

const watchSlack = 0
