//go:build !linux && !darwin && !windows

package procmem

type sysReader struct{}

func open(int) (sysReader, error) { return sysReader{}, ErrUnsupported }

func (s *sysReader) resident() (int64, error) { return 0, ErrUnsupported }

func (s *sysReader) close() error { return nil }

func (s *sysReader) peak() (int64, error) { return 0, ErrUnsupported }

func (s *sysReader) data() (int64, error) { return 0, ErrUnsupported }
