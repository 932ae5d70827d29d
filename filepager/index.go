package filepager

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// defaultStep is the spacing of line-index checkpoints: checkpoint k is at
// byte k*step. A Pager's step field holds it; tests shrink the field to
// exercise many checkpoints in small files.
const defaultStep int64 = 64 << 10

// blockSteps is how many checkpoint steps a scan reads at once where the
// index knows nothing yet: 1 MiB reads with the default step. Where the
// index already covers a chunk, a scan reads that chunk alone (64 KiB), so
// the page after a far line costs one small read.
const blockSteps = 16

// cacheFiles is how many files' indexes a Pager keeps in memory.
const cacheFiles = 32

// lineIndex records, for a file of a given size and version stamp, the
// line number of every byte offset k*step that a scan has passed:
// lines[k] = 1 + the number of newlines in [0, k*step). lines[0] is 1. Scans
// always start at a recorded checkpoint and record every one they cross, so
// the recorded checkpoints are always a prefix 0..len(lines)-1.
//
// A lineIndex is never modified once shared; extending it makes a copy.
type lineIndex struct {
	path  string // resolved absolute path
	size  int64
	stamp int64 // the file's version (fileStamp): its times and inode
	lines []int64
	total int64 // newlines in the whole file, -1 until a scan reaches the end
	step  int64 // the checkpoint spacing
}

func newIndex(path string, size, stamp, step int64) *lineIndex {
	ix := &lineIndex{path: path, size: size, stamp: stamp, lines: []int64{1}, total: -1, step: step}
	if size == 0 {
		ix.total = 0
	}
	return ix
}

func (ix *lineIndex) matches(size, stamp int64) bool {
	return ix.size == size && ix.stamp == stamp
}

// clone returns a copy that can be extended without touching ix.
func (ix *lineIndex) clone() *lineIndex {
	c := *ix
	c.lines = append(make([]int64, 0, len(ix.lines)+16), ix.lines...)
	return &c
}

// better reports whether ix knows more than old about the same file version.
func (ix *lineIndex) better(old *lineIndex) bool {
	if old == nil || !old.matches(ix.size, ix.stamp) {
		return true
	}
	return len(ix.lines) > len(old.lines) || ix.total >= 0 && old.total < 0
}

// indexCache is a small LRU of line indexes, most recent first.
type indexCache struct {
	mu      sync.Mutex
	entries []*lineIndex
}

func (c *indexCache) get(path string) *lineIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, ix := range c.entries {
		if ix.path == path {
			copy(c.entries[1:i+1], c.entries[:i])
			c.entries[0] = ix
			return ix
		}
	}
	return nil
}

// put stores ix unless the cache already holds a better index for the same
// file version (another goroutine's longer scan).
func (c *indexCache) put(ix *lineIndex) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, old := range c.entries {
		if old.path == ix.path {
			if !ix.better(old) {
				return
			}
			c.entries = append(c.entries[:i], c.entries[i+1:]...)
			break
		}
	}
	c.entries = append(c.entries, nil)
	copy(c.entries[1:], c.entries)
	c.entries[0] = ix
	if len(c.entries) > cacheFiles {
		c.entries = c.entries[:cacheFiles]
	}
}

// Index files. Layout, little-endian:
//
//	magic    [8]byte "SBLINE1\n"
//	step     int64, the checkpoint spacing the index was built with
//	size     int64
//	stamp    int64, fileStamp of the file the index was built for
//	total    int64
//	pathLen  uint32, then the path
//	n        uint32, then n int64 checkpoints
//	crc      uint32, CRC-32 (IEEE) of everything before it
var indexMagic = [8]byte{'S', 'B', 'L', 'I', 'N', 'E', '1', '\n'}

func indexFileName(dir, path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(dir, hex.EncodeToString(sum[:16])+".idx")
}

func (ix *lineIndex) marshal() []byte {
	b := make([]byte, 0, headerLen+len(ix.path)+8*len(ix.lines))
	b = append(b, indexMagic[:]...)
	b = binary.LittleEndian.AppendUint64(b, uint64(ix.step))
	b = binary.LittleEndian.AppendUint64(b, uint64(ix.size))
	b = binary.LittleEndian.AppendUint64(b, uint64(ix.stamp))
	b = binary.LittleEndian.AppendUint64(b, uint64(ix.total))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ix.path)))
	b = append(b, ix.path...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(ix.lines)))
	for _, l := range ix.lines {
		b = binary.LittleEndian.AppendUint64(b, uint64(l))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// headerLen is the length of an index file without its path and checkpoints.
const headerLen = 8 + 8*4 + 4 + 4 + 4

var errCorrupt = errors.New("filepager: corrupt index file")

// unmarshalIndex parses an index file and checks that it is internally
// consistent and built with checkpoints every step bytes: a corrupt file
// must never lead a scan astray.
func unmarshalIndex(b []byte, step int64) (*lineIndex, error) {
	if len(b) < headerLen || !bytes.Equal(b[:8], indexMagic[:]) {
		return nil, errCorrupt
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, errCorrupt
	}
	le := binary.LittleEndian
	if int64(le.Uint64(body[8:])) != step {
		return nil, errCorrupt
	}
	ix := &lineIndex{
		size:  int64(le.Uint64(body[16:])),
		stamp: int64(le.Uint64(body[24:])),
		total: int64(le.Uint64(body[32:])),
		step:  step,
	}
	rest := body[40:]
	pn := uint64(le.Uint32(rest))
	rest = rest[4:]
	if uint64(len(rest)) < pn+4 {
		return nil, errCorrupt
	}
	ix.path, rest = string(rest[:pn]), rest[pn:]
	n := uint64(le.Uint32(rest))
	rest = rest[4:]
	if n == 0 || uint64(len(rest)) != 8*n || ix.size < 0 || int64(n-1) > ix.size/step {
		return nil, errCorrupt
	}
	ix.lines = make([]int64, n)
	for i := range ix.lines {
		ix.lines[i] = int64(le.Uint64(rest[8*i:]))
		if i == 0 && ix.lines[0] != 1 || i > 0 && (ix.lines[i] < ix.lines[i-1] || ix.lines[i]-ix.lines[i-1] > step) {
			return nil, errCorrupt
		}
	}
	if ix.total < -1 || ix.total > ix.size || ix.total >= 0 && ix.total < ix.lines[n-1]-1 {
		return nil, errCorrupt
	}
	return ix, nil
}

// loadIndex reads the index file for path from dir, or returns nil when
// there is none, or it is stale or corrupt.
func loadIndex(dir, path string, size, stamp, step int64) *lineIndex {
	f, err := os.Open(indexFileName(dir, path))
	if err != nil {
		return nil
	}
	defer f.Close()
	// An index of a file of this size cannot be larger than this.
	max := int64(headerLen+len(path)) + 8*(size/step+1)
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil || int64(len(b)) > max {
		return nil
	}
	ix, err := unmarshalIndex(b, step)
	if err != nil || ix.path != path || !ix.matches(size, stamp) {
		return nil
	}
	return ix
}

// saveIndex writes ix to its file in dir atomically: a temporary file in
// the same directory renamed over the old one. Failures are ignored: an
// index is only a shortcut.
func saveIndex(dir string, ix *lineIndex) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return
	}
	tmp, err := os.CreateTemp(dir, ".idx-*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(ix.marshal())
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), indexFileName(dir, ix.path)) != nil {
		os.Remove(tmp.Name())
	}
}

var bufPool sync.Pool // of *[]byte, blockSteps*step bytes long (step: the index's)

// scanner walks a file chunk by chunk from a checkpoint, extending the
// index it works on (a private clone) with every whole chunk it reads.
type scanner struct {
	ctx     context.Context
	f       io.ReaderAt
	ix      *lineIndex
	scanned *int64 // bytes read by scans, for tests and statistics
	grew    bool
	fresh   bool // the index is not to be kept

	mem      *[]byte // from bufPool, once needed
	buf      []byte  // the bytes last read ...
	bufStart int64   // ... and where in the file they start
}

// chunk returns chunk k: the bytes [k*step, min((k+1)*step, size)).
func (s *scanner) chunk(k int64) ([]byte, error) {
	start := k * s.ix.step
	end := min(start+s.ix.step, s.ix.size)
	if start >= s.bufStart && end <= s.bufStart+int64(len(s.buf)) {
		return s.buf[start-s.bufStart : end-s.bufStart], nil
	}
	if err := s.ctx.Err(); err != nil {
		return nil, err
	}
	if s.mem == nil {
		s.mem, _ = bufPool.Get().(*[]byte)
		if s.mem == nil || int64(len(*s.mem)) != blockSteps*s.ix.step {
			b := make([]byte, blockSteps*s.ix.step)
			s.mem = &b
		}
	}
	n := s.ix.step // the index knows what follows: read just this chunk
	if k+1 >= int64(len(s.ix.lines)) {
		n = blockSteps * s.ix.step
	}
	b := (*s.mem)[:min(n, s.ix.size-start)]
	m, err := s.f.ReadAt(b, start)
	*s.scanned += int64(m)
	if m < len(b) {
		s.buf = nil
		if err == nil || err == io.EOF {
			err = changed(s.ix.size)
		}
		return nil, err
	}
	s.buf, s.bufStart = b, start
	return b[:end-start], nil
}

// release gives the scanner's buffer back.
func (s *scanner) release() {
	if s.mem != nil {
		bufPool.Put(s.mem)
		s.mem, s.buf = nil, nil
	}
}

// record notes that chunk k holds count newlines.
func (s *scanner) record(k int64, chunkLen int, count int64) {
	ix := s.ix
	if int64(chunkLen) == s.ix.step && int64(len(ix.lines)) == k+1 {
		ix.lines = append(ix.lines, ix.lines[k]+count)
		s.grew = true
	}
	if (k+1)*s.ix.step >= ix.size && ix.total < 0 {
		ix.total = ix.lines[k] - 1 + count
		s.grew = true
	}
}

// lineStart returns the byte offset where line n (n >= 2) starts, or -1
// when the file has fewer than n-1 newlines.
func (s *scanner) lineStart(n int64) (int64, error) {
	ix := s.ix
	if ix.total >= 0 && n-1 > ix.total {
		return -1, nil
	}
	// Largest k with lines[k] < n: the (n-1)th newline lies at or after k*step.
	k := int64(sort.Search(len(ix.lines), func(i int) bool { return ix.lines[i] >= n }) - 1)
	for ; k*s.ix.step < ix.size; k++ {
		b, err := s.chunk(k)
		if err != nil {
			return 0, err
		}
		need := n - ix.lines[k] // newlines still to pass, counted from k*step
		c := int64(bytes.Count(b, nl))
		if c >= need {
			i := 0
			for ; need > 0; need-- {
				i += bytes.IndexByte(b[i:], '\n') + 1
			}
			s.record(k, len(b), c)
			return k*s.ix.step + int64(i), nil
		}
		s.record(k, len(b), c)
	}
	return -1, nil
}

// lineOf returns the line number of byte offset off (0 <= off <= size).
func (s *scanner) lineOf(off int64) (int64, error) {
	ix := s.ix
	k := min(off/s.ix.step, int64(len(ix.lines)-1))
	if off == k*s.ix.step {
		return ix.lines[k], nil
	}
	if k+1 < int64(len(ix.lines)) && ix.lines[k] == ix.lines[k+1] {
		return ix.lines[k], nil // no newline in this chunk: inside a long line
	}
	for ; ; k++ {
		b, err := s.chunk(k)
		if err != nil {
			return 0, err
		}
		c := int64(bytes.Count(b, nl))
		s.record(k, len(b), c)
		if end := k*s.ix.step + int64(len(b)); off <= end {
			before := int64(bytes.Count(b[:off-k*s.ix.step], nl))
			return ix.lines[k] + before, nil
		}
	}
}

var nl = []byte{'\n'}
