package chunkcodec

import "bytes"

// Tally counts what a copy's chunks hold as a backend writes them: the
// copy's size, what its chunks take stored, and its lines as
// store.CopyInfo.Lines defines them (newline-terminated lines, plus one for
// a final unterminated line). The zero value is an empty copy.
type Tally struct {
	Total  int64 // bytes of the copy
	Stored int64 // bytes its chunks take, as stored
	Chunks int64 // chunks written: the next one's number

	newlines int64
	last     byte // the copy's last byte, if Total > 0
}

// Add counts chunk, stored in stored bytes, as the copy's next.
func (t *Tally) Add(chunk []byte, stored int) {
	if len(chunk) == 0 {
		return
	}
	t.Total += int64(len(chunk))
	t.Stored += int64(stored)
	t.Chunks++
	t.newlines += int64(bytes.Count(chunk, newline))
	t.last = chunk[len(chunk)-1]
}

// Merge counts what o counted as written after what t did.
func (t *Tally) Merge(o Tally) {
	if o.Total == 0 {
		return
	}
	t.Total += o.Total
	t.Stored += o.Stored
	t.Chunks += o.Chunks
	t.newlines += o.newlines
	t.last = o.last
}

// Lines returns the copy's line count so far.
func (t *Tally) Lines() int64 {
	if t.Total > 0 && t.last != '\n' {
		return t.newlines + 1
	}
	return t.newlines
}

var newline = []byte{'\n'}
