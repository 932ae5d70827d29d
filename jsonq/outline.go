package jsonq

import (
	"bytes"
	"slices"
	"strconv"
	"strings"

	"github.com/scrollback-dev/scrollback/internal/utf8x"
)

// Outline is the shape of a JSON copy: for one document, its root and
// members with where each value starts and how long it is, so that a model
// reading a preview knows where "summary" is before paging to it.
type Outline struct {
	// Documents is 1 for one document; for JSON Lines or another stream of
	// documents it counts them, and Entries outline the first document
	// (its root and members, with offsets in the copy).
	Documents int
	// Entries are the root (Depth 0), its members in document order (Depth
	// 1) and, for members that are arrays or objects, their first few
	// members (Depth 2). At most maxMembers members of the root are kept;
	// Omitted counts the rest.
	Entries []Entry
	Omitted int
}

// Entry is one value of an outline.
type Entry struct {
	Path   []any  // the keys (string) and indexes (int) from the root
	Kind   string // object, array, string, number, boolean or null
	Len    int    // keys of an object, elements of an array
	Offset int64  // the copy offset of the value's first byte
	Size   int64  // its length in bytes
	Depth  int    // len(Path)
}

const (
	maxMembers  = 1000 // root members an outline keeps
	maxChildren = 8    // members of each object among the root's members it keeps
	maxElements = 1    // first elements of each array among them it keeps (and the last): the two give its records' shape and size; more cost a footer 50 bytes a line
)

// MayBeJSON reports whether data could have an outline: whether it starts,
// after white space, with an object or an array. It looks at a few bytes.
func MayBeJSON(data []byte) bool {
	for _, c := range data {
		switch c {
		case ' ', '\n', '\r', '\t':
			continue
		case '{', '[':
			return true
		}
		return false
	}
	return false
}

// OutlineOf returns the outline of data when data is JSON: one value, or a
// stream of values, with nothing else but white space. ok is false for
// anything else. It reads data once without decoding it.
func OutlineOf(data []byte) (o Outline, ok bool) {
	s := scanner{data: data}
	i := s.space(0)
	if i == len(data) || data[i] != '{' && data[i] != '[' {
		return Outline{}, false // a lone scalar is not worth an outline
	}
	root := Entry{Offset: int64(i)}
	end, ok := s.value(i, 0, &root, &o)
	if !ok {
		return Outline{}, false
	}
	root.Size = int64(end - i)
	o.Documents = 1
	for i = s.space(end); i < len(data); i = s.space(end) {
		if end, ok = s.value(i, 3, nil, nil); !ok {
			return Outline{}, false
		}
		o.Documents++
	}
	o.Entries = append([]Entry{root}, slices.DeleteFunc(o.Entries, func(e Entry) bool { return e.Depth < 0 })...)
	if o.Documents > 1 {
		// A stream: the first document's members show what each record
		// holds; below them would be one record's detail, left out.
		o.Entries = slices.DeleteFunc(o.Entries, func(e Entry) bool { return e.Depth > 1 })
	}
	return o, true
}

// scanner checks and measures JSON without decoding it.
type scanner struct {
	data  []byte
	depth int
	stack []byte // the closers skip expects, innermost last
}

// Byte classes for skip, outside strings.
const (
	cOther = iota // digits, signs, letters of true/false/null, ',', ':', white space
	cQuote
	cOpen
	cClose
	cBad // cannot appear outside a string in JSON
)

var (
	outside  [256]uint8
	inString [256]bool // bytes that end a run of plain string bytes: '"', '\\', control characters
)

func init() {
	for c := range 256 {
		outside[c] = cBad
		inString[c] = c < 0x20 || c == '"' || c == '\\'
	}
	for _, c := range []byte("0123456789+-.eEtruefalsn,: \n\r\t") {
		outside[c] = cOther
	}
	outside['"'] = cQuote
	outside['['], outside['{'] = cOpen, cOpen
	outside[']'], outside['}'] = cClose, cClose
}

// skip scans the object or array at i, below the levels an outline shows,
// as fast as a table lookup a byte allows. It checks the structure: strings
// (their escapes and the absence of control characters), brackets that
// match, nesting within MaxDepth, and that only bytes JSON allows appear
// between strings. It does not check the grammar of scalars, commas and
// colons there: a copy malformed only that way gets an outline (whose
// offsets are still right) and query_tool_output names the error.
func (s *scanner) skip(i int) (int, bool) {
	d := s.data
	s.stack = s.stack[:0]
	for i < len(d) {
		cl := outside[d[i]]
		if cl == cOther {
			i++
			continue
		}
		switch cl {
		case cQuote:
			// A string, inline: this loop is most of an outline's time.
			for i++; ; {
				for i < len(d) && !inString[d[i]] {
					i++
				}
				if i >= len(d) {
					return 0, false
				}
				if d[i] == '"' {
					i++
					break
				}
				if d[i] != '\\' {
					return 0, false // a control character
				}
				end, ok := s.escape(i)
				if !ok {
					return 0, false
				}
				i = end
			}
		case cOpen:
			if s.depth+len(s.stack) >= MaxDepth {
				return 0, false
			}
			s.stack = append(s.stack, d[i]+2) // '[' + 2 == ']', '{' + 2 == '}'
			i++
		case cClose:
			n := len(s.stack)
			if n == 0 || s.stack[n-1] != d[i] {
				return 0, false
			}
			s.stack = s.stack[:n-1]
			i++
			if n == 1 {
				return i, true
			}
		default:
			return 0, false
		}
	}
	return 0, false
}

// escape checks the escape sequence at i (a backslash) and returns where
// it ends.
func (s *scanner) escape(i int) (int, bool) {
	d := s.data
	if i+1 >= len(d) {
		return 0, false
	}
	if d[i+1] == 'u' {
		if i+6 > len(d) {
			return 0, false
		}
		for _, h := range d[i+2 : i+6] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return 0, false
			}
		}
		return i + 6, true
	}
	if strings.IndexByte(`"\\/bfnrt`, d[i+1]) < 0 {
		return 0, false
	}
	return i + 2, true
}

func (s *scanner) space(i int) int {
	for i < len(s.data) {
		switch s.data[i] {
		case ' ', '\n', '\r', '\t':
			i++
		default:
			return i
		}
	}
	return i
}

// value scans the value at i and returns where it ends. level is the
// value's depth in the outline: at levels 0 and 1 its members are recorded
// (into o, under e), deeper only checked.
func (s *scanner) value(i, level int, e *Entry, o *Outline) (int, bool) {
	if i >= len(s.data) {
		return 0, false
	}
	switch c := s.data[i]; {
	case c == '{' || c == '[':
		if e != nil {
			e.Kind = "object"
			if c == '[' {
				e.Kind = "array"
			}
		}
		return s.container(i, level, e, o)
	case c == '"':
		if e != nil {
			e.Kind = "string"
		}
		return s.str(i)
	case c == 't':
		return s.word(i, "true", e, "boolean")
	case c == 'f':
		return s.word(i, "false", e, "boolean")
	case c == 'n':
		return s.word(i, "null", e, "null")
	case c == '-' || '0' <= c && c <= '9':
		if e != nil {
			e.Kind = "number"
		}
		j := i
		for j < len(s.data) && strings.IndexByte("0123456789+-.eE", s.data[j]) >= 0 {
			j++
		}
		if n, _, ok := numberEnd(s.data[i:j]); !ok || n != j-i {
			return 0, false
		}
		return j, true
	}
	return 0, false
}

func (s *scanner) word(i int, w string, e *Entry, kind string) (int, bool) {
	if !bytes.HasPrefix(s.data[i:], []byte(w)) {
		return 0, false
	}
	if e != nil {
		e.Kind = kind
	}
	return i + len(w), true
}

func (s *scanner) str(i int) (int, bool) {
	d := s.data
	for i++; i < len(d); {
		for i < len(d) && !inString[d[i]] {
			i++
		}
		if i >= len(d) {
			return 0, false
		}
		switch d[i] {
		case '"':
			return i + 1, true
		case '\\':
			end, ok := s.escape(i)
			if !ok {
				return 0, false
			}
			i = end
		default:
			return 0, false // a control character
		}
	}
	return 0, false
}

// container scans an object or array starting at i.
func (s *scanner) container(i, level int, e *Entry, o *Outline) (int, bool) {
	if o == nil && e == nil {
		return s.skip(i)
	}
	if s.depth++; s.depth > MaxDepth {
		return 0, false
	}
	end, ok := s.members(i, level, e, o)
	s.depth--
	return end, ok
}

// members scans the members of the object or array at i.
func (s *scanner) members(i, level int, e *Entry, o *Outline) (int, bool) {
	object := s.data[i] == '{'
	closer := byte(']')
	if object {
		closer = '}'
	}
	i = s.space(i + 1)
	if i < len(s.data) && s.data[i] == closer {
		return i + 1, true
	}
	var kept []Entry // members recorded at level 1, for the outline
	var last Entry   // the last element of an array at level 1, past those kept
	hasLast := false
	var seen map[string]int
	if object && level == 0 && o != nil {
		seen = map[string]int{} // key -> its entry: a repeated key's last value wins, as in jq
	}
	var scratch *Entry // the member being scanned: one allocation per recorded container, not per member
	if o != nil {
		scratch = new(Entry)
	}
	n := 0
	for {
		var key string
		if object {
			if i >= len(s.data) || s.data[i] != '"' {
				return 0, false
			}
			end, ok := s.str(i)
			if !ok {
				return 0, false
			}
			if level <= 1 {
				key = keyString(s.data[i:end])
			}
			i = s.space(end)
			if i >= len(s.data) || s.data[i] != ':' {
				return 0, false
			}
			i = s.space(i + 1)
		}
		var child *Entry
		keep := maxElements
		if object {
			keep = maxChildren
		}
		record := o != nil && (level == 0 && n < maxMembers || level == 1 && (n < keep || !object))
		at := -1 // where a root member sits in o.Entries, its children after it
		if record {
			*scratch = Entry{Offset: int64(i), Depth: level + 1}
			if e != nil && (level == 0 || n < keep) {
				scratch.Path = append(append([]any(nil), e.Path...), pathKey(object, key, n))
			}
			child = scratch
			if level == 0 {
				at = len(o.Entries)
				o.Entries = append(o.Entries, Entry{})
			}
		}
		childOutline := o
		if !record {
			childOutline = nil
		}
		end, ok := s.value(i, level+1, child, childOutline)
		if !ok {
			return 0, false
		}
		if object && level == 1 && o != nil {
			kept = slices.DeleteFunc(kept, func(k Entry) bool { return k.Path[len(k.Path)-1] == key })
		}
		if seen != nil {
			if j, ok := seen[key]; ok {
				for k := j; k < len(o.Entries) && (k == j || o.Entries[k].Depth > 1); k++ {
					o.Entries[k].Depth = -1 // dropped when the outline is done
				}
			}
			if record {
				seen[key] = at
			}
		}
		if record {
			member := *scratch
			member.Size = int64(end - i)
			switch {
			case level == 0:
				o.Entries[at] = member
			case n < keep:
				kept = append(kept, member)
			default:
				last, hasLast = member, true
			}
		} else if level == 0 && o != nil {
			o.Omitted++
		}
		n++
		i = s.space(end)
		if i >= len(s.data) {
			return 0, false
		}
		if s.data[i] == ',' {
			i = s.space(i + 1)
			continue
		}
		if s.data[i] != closer {
			return 0, false
		}
		if e != nil {
			e.Len = n
		}
		if level == 1 && o != nil {
			if hasLast {
				last.Path = append(append([]any(nil), e.Path...), n-1)
				kept = append(kept, last)
			}
			o.Entries = append(o.Entries, kept...)
		}
		return i + 1, true
	}
}

func pathKey(object bool, key string, n int) any {
	if object {
		return key
	}
	return n
}

// keyString decodes a quoted key; the scanner has checked it.
func keyString(q []byte) string {
	if bytes.IndexByte(q, '\\') < 0 {
		return utf8x.ValidString(q[1 : len(q)-1])
	}
	p := newParser(bytes.NewReader(q), int64(len(q)))
	p.pos = 0
	p.fill()
	p.pos = 1
	s, err := p.str()
	if err != nil {
		return string(q[1 : len(q)-1])
	}
	return s
}

// Text renders the outline for a preview's footer in at most about budget
// bytes: the root, then each member of the root as
//
//	.items: array of 5000, at 12, 8388000 bytes
//
// (its jq path, kind, the offset where its value starts and its size),
// and below the two largest members that are arrays or objects, their first
// members. Members that do not fit are counted on a last line.
func (o Outline) Text(budget int) string {
	var b strings.Builder
	if len(o.Entries) == 0 {
		return ""
	}
	root := o.Entries[0]
	if o.Documents > 1 {
		b.WriteString("JSON Lines: a stream of ")
		b.WriteString(strconv.Itoa(o.Documents))
		b.WriteString(" documents; a filter runs on each. The first, ")
	} else {
		b.WriteString("JSON ")
	}
	kindText(&b, root)
	b.WriteString(", ")
	b.WriteString(strconv.FormatInt(root.Size, 10))
	b.WriteString(" bytes:\n")
	// A root array's elements are records of one shape: its first and last
	// say what each holds and how large, as for an array below the root;
	// listing more cost a footer 50 bytes an element and told nothing new.
	// Its members, numbered, are then an index range left out. elided
	// reports whether Entries[i], a member of the root, is left out so.
	elided := func(i int, e Entry) bool {
		return root.Kind == "array" && i > 1 && (len(e.Path) == 0 || e.Path[0] != any(root.Len-1))
	}
	// The two largest containers among the root's members shown get their
	// own members shown.
	var big [2]int
	for i, e := range o.Entries {
		if e.Depth != 1 || e.Kind != "object" && e.Kind != "array" || e.Len == 0 || elided(i, e) {
			continue
		}
		if big[0] == 0 || e.Size > o.Entries[big[0]].Size {
			big[0], big[1] = i, big[0]
		} else if big[1] == 0 || e.Size > o.Entries[big[1]].Size {
			big[1] = i
		}
	}
	const reserve = 64 // for the line counting what is left out
	shown, parent := 0, 0
	members := root.Len
	skipped := false // elided members not yet counted on a line
	for i, e := range o.Entries[1:] {
		i++
		if e.Depth == 1 {
			if elided(i, e) {
				parent, skipped = 0, true
				continue
			}
			if skipped {
				more := "  ... " + strconv.Itoa(root.Len-2) + plural(root.Len-2, " more element\n", " more elements\n")
				if b.Len()+len(more) > budget-reserve {
					break
				}
				b.WriteString(more)
				skipped = false
				shown += root.Len - 2
			}
			parent = i
		} else if parent == 0 || parent != big[0] && parent != big[1] {
			continue
		}
		line := entryLine(e)
		if b.Len()+len(line) > budget-reserve {
			break
		}
		b.WriteString(line)
		if e.Depth == 1 {
			shown++
		}
	}
	if rest := members - shown; rest > 0 {
		b.WriteString("  ... ")
		b.WriteString(strconv.Itoa(rest))
		b.WriteString(" more members of the root not listed\n")
	}
	return b.String()
}

func entryLine(e Entry) string {
	var b strings.Builder
	b.WriteString(strings.Repeat("  ", e.Depth))
	b.WriteString(PathString(e.Path))
	b.WriteString(": ")
	kindText(&b, e)
	b.WriteString(", at ")
	b.WriteString(strconv.FormatInt(e.Offset, 10))
	b.WriteString(", ")
	b.WriteString(strconv.FormatInt(e.Size, 10))
	b.WriteString(plural(int(e.Size), " byte\n", " bytes\n"))
	return b.String()
}

func kindText(b *strings.Builder, e Entry) {
	switch e.Kind {
	case "object":
		b.WriteString("object of ")
		b.WriteString(strconv.Itoa(e.Len))
		b.WriteString(plural(e.Len, " key", " keys"))
	case "array":
		b.WriteString("array of ")
		b.WriteString(strconv.Itoa(e.Len))
	default:
		b.WriteString(e.Kind)
	}
}

// PathString writes a path as jq does: .key, ."odd key", [3]; "." for the
// root. Keys longer than 40 bytes are cut, ending "...", and are then only
// a label.
func PathString(path []any) string {
	if len(path) == 0 {
		return "."
	}
	var b strings.Builder
	for _, k := range path {
		switch k := k.(type) {
		case int:
			if b.Len() == 0 {
				b.WriteByte('.')
			}
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(k))
			b.WriteByte(']')
		case string:
			b.WriteByte('.')
			if len(k) > 40 {
				cut := 40
				for cut > 0 && k[cut]&0xC0 == 0x80 {
					cut--
				}
				k = k[:cut] + "..."
			}
			if identifier(k) {
				b.WriteString(k)
			} else {
				q, _ := gojqMarshal(k)
				b.Write(q)
			}
		}
	}
	return b.String()
}

func identifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range []byte(s) {
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
