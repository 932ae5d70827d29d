package proxy

import (
	"bytes"
	"encoding/base64"
	"io"
	"strconv"
)

// cutReader passes JSON-RPC messages (stdio frames, the data lines of
// server-sent events, or a JSON response body) through unchanged, except for
// the large content strings of a result, so that a 100 MiB tool result never
// reaches the SDK's decoder whole: the proxy keeps at most the copy cap of
// it anyway, and the SDK would otherwise buffer the raw frame and decode it
// again.
//
// It follows the JSON structure of each message and only ever touches
// string values under the message's top-level "result":
//   - text: the value of a "text" member (text blocks, embedded text
//     resources, prompt messages) and every string value inside
//     "structuredContent";
//   - binary: the value of a "data" or "blob" member (images, audio, blob
//     resources), which is base64 and must never be cut inside.
//
// Keys, the envelope ("jsonrpc", "id", "method", "error", "params"),
// "_meta", and every other member pass byte for byte, whatever their order
// in the message (the TypeScript SDK writes "jsonrpc" after "result").
//
// Text: once the text strings of one message (content text and
// structuredContent each have their own budget) have used up the head budget,
// the rest of the string being read is dropped except for its last tail
// bytes, and a cut token stands at the gap:
//
//	head \n[scrollback-cut:NONCE:BYTES:LINES]\n tail
//
// BYTES and LINES count the dropped text as decoded (a "\n" escape is one
// byte and one line), not its JSON escaping. Later text strings of the same
// message keep no tail: each is emptied to its cut token alone. The proxy
// turns the tokens into readable marker lines (mend) and knows from them
// that the copy is incomplete. A cut starts and the kept tail begins only at
// the start of a character or of an escape sequence, so valid JSON stays
// valid JSON and valid UTF-8 stays valid.
//
// Binary: a binary string passes whole while the message's binary strings
// fit the binary budget; one that does not is replaced by the base64 of
// "scrollback-cut:NONCE:LENGTH", which the proxy turns into a text note.
//
// Memory is bounded: the tail ring, the binary budget and one read buffer.
//
// In lines mode (stdio, server-sent events) the state resets at every
// newline, so a malformed line cannot confuse the next one; outside lines
// mode a newline inside a string (invalid JSON) resets it too.
type cutReader struct {
	r       io.Reader
	lines   bool
	headMax int64 // text bytes a message keeps before cutting
	bin     int64 // base64 bytes a message carries whole
	nonce   string

	stack []frame
	deep  int // containers nested past maxDepth, not followed

	// the current string
	inStr   bool
	kind    int
	d       unitDecoder
	cutting bool
	ringOn  bool  // the cut string keeps its tail in the ring
	headNL  bool  // the last kept unit was a newline
	cutDec  int64 // decoded bytes cut from the current string
	cutNL   int64 // newlines among them
	binLen  int64
	binOver bool
	binBuf  []byte

	// the current message, per class of text (content, structured)
	seen    [2]int64 // text bytes kept
	noted   [2]bool  // the first cut has been made
	binSeen int64

	ring tailRing
	in   []byte // read buffer
	out  []byte // processed bytes not yet returned
	err  error  // the underlying reader's error, returned once out drains
}

// frame is one open container of the message being read.
type frame struct {
	obj     bool
	wantKey bool
	ctx     int
	key     [24]byte
	keyLen  int // > len(key) when the key is longer than matters
}

// Where a container stands in a message.
const (
	ctxNone   = iota // touch nothing
	ctxBatch         // a batch: its elements are messages
	ctxTop           // the message object itself
	ctxResult        // inside "result"
	ctxStruct        // inside "result"."structuredContent"
)

// What a string is.
const (
	strKeep = iota
	strKey
	strText   // content text: "text" members
	strStruct // the strings of structuredContent, budgeted apart
	strBin
)

// maxDepth bounds the containers followed; deeper strings are kept.
const maxDepth = 256

// cutMarkerRoom is what the cut token and its newlines may take.
const cutMarkerRoom = 128

// newCutReader returns a cutReader whose messages keep at most textMax
// bytes of text (tail bytes of them from the end of the first cut string)
// and binMax bytes of base64.
func newCutReader(r io.Reader, lines bool, textMax int64, tail int, binMax int64, nonce string) *cutReader {
	if min := int64(tail) + 2*cutMarkerRoom; textMax < min {
		textMax = min
	}
	return &cutReader{r: r, lines: lines, headMax: textMax - int64(tail) - cutMarkerRoom, bin: binMax, nonce: nonce,
		ring: tailRing{size: tail}, in: make([]byte, 32<<10)}
}

// cutToken is what stands at a gap in a cut text string. flags says which
// newlines the cut added around it: "l" before it, "t" after it (a tail
// follows).
func cutToken(nonce string, dropped, lines int64, flags string) string {
	return "[scrollback-cut:" + nonce + ":" + strconv.FormatInt(dropped, 10) + ":" + strconv.FormatInt(lines, 10) + ":" + flags + "]"
}

// binToken is what a binary string too large to carry is replaced by,
// before base64.
func binToken(nonce string, length int64) string {
	return "scrollback-cut:" + nonce + ":" + strconv.FormatInt(length, 10)
}

func (c *cutReader) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		n, err := c.r.Read(c.in)
		c.out = c.process(c.in[:n], c.out[:0])
		c.err = err
		if c.err != nil {
			c.out = c.flush(c.out)
		}
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
	for i := 0; i < len(in); i++ {
		b := in[i]
		if c.inStr {
			if b == '\n' {
				// Invalid inside a string: give up on this message.
				out = c.flush(out)
				c.reset()
				out = append(out, b)
				continue
			}
			if c.kind == strKeep || c.kind == strKey {
				// Fast path: copy up to the next quote or backslash.
				j := i
				if c.d.esc == 0 {
					for j < len(in) && in[j] != '"' && in[j] != '\\' && in[j] != '\n' {
						j++
					}
					if c.kind == strKey {
						c.addKey(in[i:j])
					}
					out = append(out, in[i:j]...)
					if j > i {
						i = j - 1
						continue
					}
				}
			}
			if (c.kind == strText || c.kind == strStruct) && c.d.esc == 0 {
				// Fast path: a run of plain bytes (no quote, backslash
				// or newline), kept while the budget lasts, else cut.
				j := i
				for j < len(in) && in[j] != '"' && in[j] != '\\' && in[j] != '\n' {
					j++
				}
				if j > i {
					out = c.plainRun(in[i:j], out)
					i = j - 1
					continue
				}
			}
			out = c.stringByte(b, out)
			continue
		}
		switch b {
		case '\n':
			if c.lines {
				c.reset()
			}
		case '{', '[':
			c.open(b == '{')
		case '}', ']':
			c.close()
		case ':':
			if f := c.top(); f != nil {
				f.wantKey = false
			}
		case ',':
			if f := c.top(); f != nil && f.obj {
				f.wantKey = true
			}
		case '"':
			if len(c.stack) > 0 || c.deep > 0 {
				c.startString()
			}
		}
		out = append(out, b)
	}
	return out
}

func (c *cutReader) top() *frame {
	if c.deep > 0 || len(c.stack) == 0 {
		return nil
	}
	return &c.stack[len(c.stack)-1]
}

func (c *cutReader) open(obj bool) {
	if c.deep > 0 || len(c.stack) >= maxDepth {
		c.deep++
		return
	}
	ctx := ctxNone
	if f := c.top(); f == nil {
		ctx = ctxTop
		if !obj {
			ctx = ctxBatch
		}
	} else {
		key := f.keyName()
		switch f.ctx {
		case ctxBatch:
			ctx = ctxTop
		case ctxTop:
			if f.obj && key == "result" {
				ctx = ctxResult
			}
		case ctxResult:
			ctx = ctxResult
			if f.obj && key == "structuredContent" {
				ctx = ctxStruct
			} else if f.obj && key == "_meta" {
				ctx = ctxNone
			}
		case ctxStruct:
			ctx = ctxStruct
		}
	}
	c.stack = append(c.stack, frame{obj: obj, wantKey: obj, ctx: ctx})
}

func (c *cutReader) close() {
	if c.deep > 0 {
		c.deep--
		return
	}
	if len(c.stack) == 0 {
		return
	}
	c.stack = c.stack[:len(c.stack)-1]
	if len(c.stack) == 0 || len(c.stack) == 1 && c.stack[0].ctx == ctxBatch {
		c.seen, c.binSeen, c.noted = [2]int64{}, 0, [2]bool{} // the message ended
	}
}

// reset forgets the message being read.
func (c *cutReader) reset() {
	c.stack, c.deep = c.stack[:0], 0
	c.inStr, c.cutting, c.binOver, c.binBuf = false, false, false, c.binBuf[:0]
	c.seen, c.binSeen, c.noted = [2]int64{}, 0, [2]bool{}
}

func (f *frame) keyName() string {
	if f.keyLen > len(f.key) {
		return ""
	}
	return string(f.key[:f.keyLen])
}

func (c *cutReader) addKey(p []byte) {
	f := c.top()
	if f == nil {
		return
	}
	for _, b := range p {
		if f.keyLen < len(f.key) {
			f.key[f.keyLen] = b
		}
		f.keyLen++
	}
}

// startString decides, at its opening quote, what a string is.
func (c *cutReader) startString() {
	c.inStr, c.kind, c.d = true, strKeep, unitDecoder{}
	f := c.top()
	switch {
	case f == nil:
	case f.obj && f.wantKey:
		c.kind, f.keyLen = strKey, 0
	case f.ctx == ctxStruct:
		c.kind = strStruct
	case f.ctx == ctxResult && f.obj:
		switch f.keyName() {
		case "text":
			c.kind = strText
		case "data", "blob":
			c.kind, c.binLen, c.binOver, c.binBuf = strBin, 0, false, c.binBuf[:0]
		}
	}
	c.headNL, c.cutDec, c.cutNL = false, 0, 0
}

// stringByte handles one byte inside a string.
func (c *cutReader) stringByte(b byte, out []byte) []byte {
	if b == '"' && c.d.esc == 0 {
		c.inStr = false
		switch c.kind {
		case strText, strStruct:
			if c.cutting {
				out = c.endCut(out)
			}
		case strBin:
			out = c.endBin(out)
		}
		return append(out, b)
	}
	start, size, nl := c.d.step(b)
	switch c.kind {
	case strKey:
		c.addKey([]byte{b})
		return append(out, b)
	case strText, strStruct:
		cls := c.kind - strText
		if start && !c.cutting && c.seen[cls] >= c.headMax {
			c.cutting, c.ringOn, c.noted[cls] = true, !c.noted[cls], true
			c.ring.clear()
		}
		if c.cutting {
			c.cutDec += int64(size)
			if nl {
				c.cutNL++
			}
			if c.ringOn {
				c.ring.write(b, start)
			}
			return out
		}
		c.seen[cls]++
		if size > 0 || start {
			c.headNL = nl
		}
		return append(out, b)
	case strBin:
		c.binLen++
		if !c.binOver {
			if c.binSeen+c.binLen <= c.bin {
				c.binBuf = append(c.binBuf, b)
			} else {
				c.binOver, c.binBuf = true, c.binBuf[:0]
			}
		}
		return out
	}
	return append(out, b)
}

// plainRun takes a run of a text string's bytes that holds no quote,
// backslash or newline: each byte is its own decoded byte.
func (c *cutReader) plainRun(run []byte, out []byte) []byte {
	cls := c.kind - strText
	if !c.cutting {
		room := c.headMax - c.seen[cls]
		if room < 0 {
			room = 0
		}
		n := min(int64(len(run)), room)
		if n > 0 {
			out = append(out, run[:n]...)
			c.seen[cls] += n
			c.headNL, c.d.high = false, false
			run = run[n:]
		}
		if len(run) == 0 {
			return out
		}
		// The budget is spent: go on byte by byte, so that the cut
		// starts at a character.
		for len(run) > 0 && !c.cutting {
			out = c.stringByte(run[0], out)
			run = run[1:]
		}
	}
	c.cutDec += int64(len(run))
	c.d.high = false
	if c.ringOn {
		for _, b := range run {
			c.ring.write(b, b&0xC0 != 0x80)
		}
	}
	return out
}

// endCut ends a cut text string: the token, then the kept tail when the
// string is the message's first cut.
func (c *cutReader) endCut(out []byte) []byte {
	var tail []byte
	var tailDec, tailNL int64
	if c.ringOn {
		tail = c.ring.tail()
		tailDec, tailNL = decodedSize(tail)
	}
	dropped, lines := c.cutDec-tailDec, c.cutNL-tailNL
	cls := c.kind - strText
	lead := c.ringOn && !c.headNL && c.seen[cls] > 0
	flags := ""
	if lead {
		flags += "l"
		out = append(out, `\n`...)
	}
	if c.ringOn {
		flags += "t"
	}
	tok := cutToken(c.nonce, dropped, lines, flags)
	out = append(out, tok...)
	if c.ringOn {
		out = append(out, `\n`...)
		out = append(out, tail...)
		c.seen[cls] += int64(len(tail))
	}
	c.seen[cls] += int64(len(tok))
	c.cutting, c.ringOn = false, false
	c.ring.clear()
	return out
}

// endBin ends a binary string: whole, or replaced by its token.
func (c *cutReader) endBin(out []byte) []byte {
	if !c.binOver {
		c.binSeen += int64(len(c.binBuf))
		out = append(out, c.binBuf...)
	} else {
		out = base64.StdEncoding.AppendEncode(out, []byte(binToken(c.nonce, c.binLen)))
	}
	c.binBuf = c.binBuf[:0]
	if cap(c.binBuf) > 1<<20 {
		c.binBuf = nil // do not hold a large buffer between messages
	}
	return out
}

// flush writes out what a string being read holds back, when its message
// ends without closing it (end of input, a newline inside it).
func (c *cutReader) flush(out []byte) []byte {
	if !c.inStr {
		return out
	}
	switch {
	case (c.kind == strText || c.kind == strStruct) && c.cutting:
		out = c.endCut(out)
	case c.kind == strBin && !c.binOver:
		out = append(out, c.binBuf...)
		c.binBuf = c.binBuf[:0]
	}
	c.inStr = false
	return out
}

// unitDecoder follows the characters and escape sequences of a JSON string
// byte by byte.
type unitDecoder struct {
	esc  int  // escape bytes still to come; escNext right after a backslash
	hex  rune // the \u escape read so far
	high bool // the last unit was a high surrogate
}

// escNext marks the byte after a backslash, which says how long the escape is.
const escNext = -1

// step takes one byte of a string's content. start reports that b begins a
// unit (a character or an escape); size is the decoded length, in bytes,
// that b completes (raw bytes count one each); nl that b completes a
// newline.
func (d *unitDecoder) step(b byte) (start bool, size int, nl bool) {
	switch {
	case d.esc == escNext:
		if b == 'u' {
			d.esc, d.hex = 4, 0
			return false, 0, false
		}
		d.esc, d.high = 0, false
		return false, 1, b == 'n'
	case d.esc > 0:
		d.hex = d.hex<<4 | rune(hexVal(b))
		d.esc--
		if d.esc > 0 {
			return false, 0, false
		}
		size = 3
		switch r := d.hex; {
		case r < 0x80:
			size = 1
		case r < 0x800:
			size = 2
		case r >= 0xDC00 && r < 0xE000 && d.high:
			size = 1 // a pair decodes to 4 bytes: 3 counted with its high half
		}
		d.high = d.hex >= 0xD800 && d.hex < 0xDC00
		return false, size, d.hex == '\n'
	case b == '\\':
		d.esc = escNext
		return true, 0, false
	}
	d.high = false
	return b&0xC0 != 0x80, 1, false
}

func hexVal(b byte) byte {
	switch {
	case b >= '0' && b <= '9':
		return b - '0'
	case b >= 'a' && b <= 'f':
		return b - 'a' + 10
	case b >= 'A' && b <= 'F':
		return b - 'A' + 10
	}
	return 0
}

// decodedSize counts the decoded bytes and newlines of string content that
// starts at a unit boundary.
func decodedSize(p []byte) (size, lines int64) {
	var d unitDecoder
	for _, b := range p {
		_, n, nl := d.step(b)
		size += int64(n)
		if nl {
			lines++
		}
	}
	return size, lines
}

// tailRing keeps the last size bytes of a cut string and which of them
// start a unit, so that the tail it gives back starts at a boundary.
type tailRing struct {
	size      int
	buf       []byte
	starts    []uint64 // bit i: buf[i] starts a unit
	pos, fill int
}

func (r *tailRing) clear() { r.pos, r.fill = 0, 0 }

func (r *tailRing) write(b byte, start bool) {
	if r.size <= 0 {
		return
	}
	if r.buf == nil {
		r.buf = make([]byte, r.size)
		r.starts = make([]uint64, (r.size+63)/64)
	}
	r.buf[r.pos] = b
	if start {
		r.starts[r.pos/64] |= 1 << (r.pos % 64)
	} else {
		r.starts[r.pos/64] &^= 1 << (r.pos % 64)
	}
	r.pos++
	if r.pos == r.size {
		r.pos = 0
	}
	r.fill = min(r.fill+1, r.size)
}

func (r *tailRing) isStart(i int) bool { return r.starts[i/64]&(1<<(i%64)) != 0 }

// tail returns the kept bytes from their first unit boundary, or from the
// first line start within nearLine bytes of it, in a new slice.
func (r *tailRing) tail() []byte {
	if r.fill == 0 {
		return nil
	}
	first := 0
	if r.fill == r.size {
		first = r.pos
	}
	at := func(k int) int { return (first + k) % r.size }
	k := 0
	for k < r.fill && !r.isStart(at(k)) {
		k++
	}
	// A line start near the beginning: just after a "\n" escape.
	for j := k; j < r.fill-1 && j < k+nearLine; j++ {
		if r.isStart(at(j)) && r.buf[at(j)] == '\\' && r.buf[at(j+1)] == 'n' {
			k = j + 2
			break
		}
	}
	out := make([]byte, 0, r.fill-k)
	for ; k < r.fill; k++ {
		out = append(out, r.buf[at(k)])
	}
	return out
}

// nearLine is how far the tail looks for a line start.
const nearLine = 4 << 10

// hasCut reports whether s holds a cut token of this nonce.
func hasCut(s []byte, nonce string) bool {
	return bytes.Contains(s, []byte("[scrollback-cut:"+nonce+":"))
}
