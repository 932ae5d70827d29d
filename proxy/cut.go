package proxy

import (
	"io"
	"strconv"
)

// cutReader passes newline-delimited JSON (stdio frames, or the data lines
// of server-sent events) through unchanged, except that once the string
// literals of one line hold more than max bytes, every later string of that
// line is cut short. It exists so that a 100 MiB tool result never reaches
// the SDK's decoder whole: the proxy keeps at most the copy cap of it anyway,
// and the SDK would otherwise buffer the raw frame and decode it again.
//
// Invariants (see FuzzCutReader):
//   - a line whose strings hold at most max bytes passes byte for byte;
//   - a cut happens only at the start of a character or of an escape
//     sequence, so valid JSON stays valid JSON and valid UTF-8 stays valid;
//   - the first string cut in a line ends with a note naming the bytes
//     dropped and the reader's nonce (cutNote); later cut strings of the
//     same line end with nothing, so that a line of many small strings does
//     not grow;
//   - memory is constant: nothing is held beyond one read buffer.
//
// The state resets at every newline: a raw newline cannot stand inside a
// JSON string, so a malformed line cannot confuse the next one.
type cutReader struct {
	r     io.Reader
	max   int64
	nonce string

	inStr   bool
	esc     int   // bytes of the current escape still to come; escNext after a backslash
	seen    int64 // string bytes kept in this line
	cutting bool  // dropping the rest of the current string
	noted   bool  // a note was written in this line
	dropped int64 // bytes dropped from the current string

	in  []byte // read buffer
	out []byte // processed bytes not yet returned
	err error  // the underlying reader's error, returned once out drains
}

func newCutReader(r io.Reader, max int64, nonce string) *cutReader {
	return &cutReader{r: r, max: max, nonce: nonce, in: make([]byte, 32<<10)}
}

// cutNote is what stands at the end of the first cut string of a line.
func cutNote(nonce string, dropped int64) string {
	return " [scrollback: the proxy cut " + strconv.FormatInt(dropped, 10) + " more bytes here " + nonce + "]"
}

func (c *cutReader) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		n, err := c.r.Read(c.in)
		c.out = c.process(c.in[:n], c.out[:0])
		c.err = err
		if n == 0 && err == nil {
			return 0, nil
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// process appends the filtered form of in to out.
func (c *cutReader) process(in, out []byte) []byte {
	for _, b := range in {
		switch {
		case b == '\n':
			if c.inStr && c.cutting {
				out = c.endCut(out)
			}
			c.inStr, c.esc, c.seen, c.cutting, c.noted = false, 0, 0, false, false
			out = append(out, b)
		case !c.inStr:
			c.inStr = b == '"'
			out = append(out, b)
		case c.esc != 0:
			// Inside an escape: kept or dropped with its backslash.
			switch {
			case c.esc == escNext && b == 'u':
				c.esc = 4
			case c.esc == escNext:
				c.esc = 0
			default:
				c.esc--
			}
			out = c.keep(out, b)
		case b == '"':
			if c.cutting {
				out = c.endCut(out)
			}
			c.inStr = false
			out = append(out, b)
		default:
			// b starts or continues a character, or starts an escape:
			// a cut begins only at a start.
			if b&0xC0 != 0x80 && !c.cutting && c.seen >= c.max {
				c.cutting, c.dropped = true, 0
			}
			if b == '\\' {
				c.esc = escNext
			}
			out = c.keep(out, b)
		}
	}
	return out
}

// escNext marks the byte after a backslash, which says how long the escape is.
const escNext = -1

// keep appends b to out unless the current string is being cut.
func (c *cutReader) keep(out []byte, b byte) []byte {
	if c.cutting {
		c.dropped++
		return out
	}
	c.seen++
	return append(out, b)
}

// endCut ends a cut string: with the note when it is the line's first.
func (c *cutReader) endCut(out []byte) []byte {
	if !c.noted {
		out = append(out, cutNote(c.nonce, c.dropped)...)
		c.noted = true
	}
	c.cutting, c.esc = false, 0
	return out
}
