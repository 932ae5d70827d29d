package jsonq

import (
	"errors"
	"io"
	"math/big"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// Bounds on the documents a copy may hold.
const (
	// MaxDepth is the deepest nesting of arrays and objects a document, or a
	// result, may have. Deeper input is a syntax error naming its offset,
	// not a stack overflow.
	MaxDepth = 1000
	// MaxNumberLen is the longest number literal a document may hold, in
	// bytes. Longer numbers are an error: turning them into values would
	// cost time out of all proportion to their size.
	MaxNumberLen = 1000
	// window is how much of the copy the parser reads at once: one stored
	// chunk.
	window = 64 << 10
)

// syntaxError is where and why parsing stopped; Run turns it into an *Error
// with the line and the bytes found there.
type syntaxError struct {
	offset int64
	msg    string
	eof    bool // the copy ended inside a value
}

func (e *syntaxError) Error() string { return e.msg }

// parser decodes a stream of JSON values from an io.ReaderAt into the values
// gojq works on (nil, bool, int, float64, *big.Int, string, []any,
// map[string]any), reading window bytes at a time. Strings are valid UTF-8:
// each invalid byte, and each lone surrogate escape, becomes U+FFFD.
type parser struct {
	r       io.ReaderAt
	size    int64
	buf     []byte // the window: the copy's bytes from base
	base    int64
	pos     int // next byte to read, an index in buf
	depth   int
	scratch []byte
	err     error // a read error, reported in place of a syntax error
}

func newParser(r io.ReaderAt, size int64) *parser {
	p := &parser{r: r, size: size, buf: make([]byte, 0, window)}
	// A byte order mark before the first value (a file that a Windows tool
	// saved as "UTF-8 with BOM") is not part of the JSON: skipped, as jq
	// skips it. Offsets still count it.
	var bom [3]byte
	if n, _ := r.ReadAt(bom[:], 0); n == len(bom) && string(bom[:]) == "\xef\xbb\xbf" {
		p.base = int64(len(bom))
	}
	return p
}

// newParserAt is a parser of the copy from offset off on.
func newParserAt(r io.ReaderAt, size, off int64) *parser {
	return &parser{r: r, size: size, buf: make([]byte, 0, window), base: off}
}

// offset is the copy offset of the next byte.
func (p *parser) offset() int64 { return p.base + int64(p.pos) }

// fill reads the next window once buf is used up; false at the copy's end
// or on a read error (kept in p.err).
func (p *parser) fill() bool {
	p.base += int64(len(p.buf))
	p.pos = 0
	n := min(int64(cap(p.buf)), p.size-p.base)
	if n <= 0 || p.err != nil {
		p.buf = p.buf[:0]
		return false
	}
	p.buf = p.buf[:n]
	m, err := p.r.ReadAt(p.buf, p.base)
	if m < len(p.buf) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		p.err = err
		p.buf = p.buf[:0]
		return false
	}
	return true
}

// peek skips white space and returns the next byte without consuming it.
func (p *parser) peek() (byte, bool) {
	for {
		for p.pos < len(p.buf) {
			switch c := p.buf[p.pos]; c {
			case ' ', '\n', '\r', '\t':
				p.pos++
			default:
				return c, true
			}
		}
		if !p.fill() {
			return 0, false
		}
	}
}

// next consumes and returns one byte.
func (p *parser) next() (byte, bool) {
	if p.pos == len(p.buf) && !p.fill() {
		return 0, false
	}
	c := p.buf[p.pos]
	p.pos++
	return c, true
}

func (p *parser) fail(msg string) error {
	if p.err != nil {
		return p.err
	}
	return &syntaxError{offset: p.offset(), msg: msg}
}

// failEOF reports that the copy ended where want was expected.
func (p *parser) failEOF(want string) error {
	if p.err != nil {
		return p.err
	}
	return &syntaxError{offset: p.offset(), msg: "the copy ends where " + want + " should follow", eof: true}
}

// more skips white space and reports whether another value follows.
func (p *parser) more() (bool, error) {
	_, ok := p.peek()
	if !ok && p.err != nil {
		return false, p.err
	}
	return ok, nil
}

// value decodes the next value.
func (p *parser) value() (any, error) {
	c, ok := p.peek()
	if !ok {
		return nil, p.failEOF("a value")
	}
	switch {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		p.pos++
		return p.str()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || '0' <= c && c <= '9':
		return p.number()
	}
	return nil, p.fail("found " + describe(c) + " where a JSON value should start")
}

func (p *parser) enter() error {
	if p.depth++; p.depth > MaxDepth {
		return p.fail("arrays and objects nest deeper than " + strconv.Itoa(MaxDepth) + " levels")
	}
	return nil
}

func (p *parser) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '{'
	m := map[string]any{}
	c, ok := p.peek()
	if ok && c == '}' {
		p.pos++
		p.depth--
		return m, nil
	}
	for {
		if !ok {
			return nil, p.failEOF("an object key")
		}
		if c != '"' {
			return nil, p.fail("found " + describe(c) + " where an object key (a string) should start")
		}
		p.pos++
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		if c, ok = p.peek(); !ok {
			return nil, p.failEOF(`":" after an object key`)
		} else if c != ':' {
			return nil, p.fail("found " + describe(c) + ` where ":" should follow an object key`)
		}
		p.pos++
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		m[k] = v
		if c, ok = p.peek(); !ok {
			return nil, p.failEOF(`"," or "}" in an object`)
		}
		p.pos++
		switch c {
		case ',':
			c, ok = p.peek()
		case '}':
			p.depth--
			return m, nil
		default:
			p.pos--
			return nil, p.fail("found " + describe(c) + ` where "," or "}" should follow an object member`)
		}
	}
}

func (p *parser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '['
	a := []any{}
	if c, ok := p.peek(); ok && c == ']' {
		p.pos++
		p.depth--
		return a, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		c, ok := p.peek()
		if !ok {
			return nil, p.failEOF(`"," or "]" in an array`)
		}
		p.pos++
		switch c {
		case ',':
		case ']':
			p.depth--
			return a, nil
		default:
			p.pos--
			return nil, p.fail("found " + describe(c) + ` where "," or "]" should follow an array element`)
		}
	}
}

func (p *parser) literal(word string) error {
	start := p.offset()
	for i := 0; i < len(word); i++ {
		c, ok := p.next()
		if !ok {
			return p.failEOF("the rest of " + strconv.Quote(word))
		}
		if c != word[i] {
			p.pos--
			return &syntaxError{offset: start, msg: "found a bare word that is not a JSON value (true, false and null are the only ones)"}
		}
	}
	return nil
}

// str decodes a string whose opening quote has been read.
func (p *parser) str() (string, error) {
	// Fast path: the whole string lies in the window and needs no escapes.
	for i := p.pos; i < len(p.buf); i++ {
		c := p.buf[i]
		if c == '"' {
			s := p.buf[p.pos:i]
			if utf8.Valid(s) {
				p.pos = i + 1
				return string(s), nil
			}
			break
		}
		if c == '\\' || c < 0x20 {
			break
		}
	}
	b := p.scratch[:0]
	var hi rune // a high surrogate escape waiting for its low half
	for {
		c, ok := p.next()
		if !ok {
			return "", p.failEOF("the rest of a string")
		}
		if hi != 0 && c != '\\' {
			b, hi = utf8.AppendRune(b, utf8.RuneError), 0
		}
		switch {
		case c == '"':
			p.scratch = b
			return utf8x.ValidString(b), nil
		case c < 0x20:
			p.pos--
			return "", p.fail("found " + describe(c) + " inside a string (control characters must be escaped)")
		case c != '\\':
			b = append(b, c)
			continue
		}
		c, ok = p.next()
		if !ok {
			return "", p.failEOF("an escape sequence")
		}
		if hi != 0 && c != 'u' {
			b, hi = utf8.AppendRune(b, utf8.RuneError), 0
		}
		switch c {
		case '"', '\\', '/':
			b = append(b, c)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, err := p.hex4()
			if err != nil {
				return "", err
			}
			switch {
			case hi != 0 && 0xDC00 <= r && r <= 0xDFFF:
				b, hi = utf8.AppendRune(b, utf16.DecodeRune(hi, r)), 0
			case hi != 0:
				b, hi = utf8.AppendRune(b, utf8.RuneError), 0
				fallthrough
			default:
				if 0xD800 <= r && r <= 0xDBFF {
					hi = r
				} else {
					b = utf8.AppendRune(b, r) // a lone low surrogate becomes U+FFFD
				}
			}
		default:
			p.pos--
			return "", p.fail("found " + describe(c) + ` after a backslash; valid escapes are \" \\ \/ \b \f \n \r \t \uXXXX`)
		}
	}
}

func (p *parser) hex4() (rune, error) {
	var r rune
	for range 4 {
		c, ok := p.next()
		if !ok {
			return 0, p.failEOF(`the four hex digits of a \u escape`)
		}
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			p.pos--
			return 0, p.fail("found " + describe(c) + ` where a hex digit of a \u escape should be`)
		}
	}
	return r, nil
}

// number decodes a number as gojq would: an int when it is an integer that
// fits, else a float64, else (an integer too large for int) a *big.Int.
func (p *parser) number() (any, error) {
	start := p.offset()
	b := p.scratch[:0]
	for {
		if p.pos == len(p.buf) && !p.fill() {
			if p.err != nil {
				return nil, p.err
			}
			break
		}
		c := p.buf[p.pos]
		if !('0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			break
		}
		if len(b) == MaxNumberLen {
			return nil, &syntaxError{offset: start, msg: "a number longer than " + strconv.Itoa(MaxNumberLen) + " characters starts here"}
		}
		b = append(b, c)
		p.pos++
	}
	p.scratch = b
	end, integer, ok := numberEnd(b)
	if !ok || end < len(b) {
		return nil, &syntaxError{offset: start + int64(end), msg: "a number is malformed here (" + strconv.Quote(string(b)) + " is not a JSON number)"}
	}
	if integer && len(b) <= 18 {
		n := 0
		digits := b
		if b[0] == '-' {
			digits = b[1:]
		}
		for _, c := range digits {
			n = n*10 + int(c-'0')
		}
		if b[0] == '-' {
			n = -n
		}
		return n, nil
	}
	s := string(b)
	if integer {
		if n, err := strconv.Atoi(s); err == nil {
			return n, nil
		}
		bi, _ := new(big.Int).SetString(s, 10)
		return bi, nil
	}
	// Out of float64's range, ParseFloat gives ±Inf (too large) or ±0 (too
	// small), which is what gojq makes of such a literal too (its
	// parseNumber): ±Inf is written as the largest float, as jq writes it.
	f, _ := strconv.ParseFloat(s, 64)
	return f, nil
}

// numberEnd returns how much of b is a JSON number, and whether it is an
// integer (no fraction, no exponent). When b does not start with a whole
// number, end is where it goes wrong and integer is false.
func numberEnd(b []byte) (end int, integer, ok bool) {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return i, false, false
	}
	integer = true
	if i < len(b) && b[i] == '.' {
		integer = false
		i++
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == j {
			return i, false, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		integer = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == j {
			return i, false, false
		}
	}
	return i, integer, true
}

// describe names a byte for a message.
func describe(c byte) string {
	switch {
	case c == '"':
		return `'"'`
	case c >= 0x20 && c < 0x7f:
		return "'" + string(rune(c)) + "'"
	}
	return "byte 0x" + strconv.FormatUint(uint64(c)|0x100, 16)[1:]
}
