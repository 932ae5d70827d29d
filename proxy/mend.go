package proxy

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback/present"
)

// mendStats is what mend found in a piece of text.
type mendStats struct {
	dropped, lines int64 // text the cut dropped in transit, decoded
	added          int64 // bytes of tokens and newlines the cut added
	first          int64 // offset of the first marker line in the mended text; -1 = none
}

// cutMarker is the line that stands, in a retained copy, where the proxy
// dropped part of an upstream's text in transit: the one gap marker
// (present.GapMarker), without its newline (the cut token stands on a line
// of its own).
func cutMarker(dropped, lines int64, limit int) string {
	return strings.TrimSuffix(present.GapMarker(dropped, lines, "copy", int64(limit)), "\n")
}

// mend replaces every cut token of the proxy's nonce in s by a readable
// marker, and counts what was dropped.
func (p *Proxy) mend(s string) (string, mendStats) { return p.mendWith(s, p.copyCap()) }

// mendWith is mend with the copy cap the markers name.
func (p *Proxy) mendWith(s string, limit int) (string, mendStats) {
	st := mendStats{first: -1}
	prefix := "[scrollback-cut:" + p.nonce + ":"
	if !strings.Contains(s, prefix) {
		return s, st
	}
	var b strings.Builder
	for {
		i := strings.Index(s, prefix)
		if i < 0 {
			b.WriteString(s)
			return b.String(), st
		}
		end := strings.IndexByte(s[i:], ']')
		if end < 0 {
			b.WriteString(s)
			return b.String(), st
		}
		tok := s[i : i+end+1]
		f := strings.Split(tok[len(prefix):len(tok)-1], ":")
		d, err1 := strconv.ParseInt(f[0], 10, 64)
		var l int64
		var err2 error
		if len(f) == 3 {
			l, err2 = strconv.ParseInt(f[1], 10, 64)
		}
		if len(f) != 3 || err1 != nil || err2 != nil {
			// Not a token of ours after all: keep it as it is.
			b.WriteString(s[:i+end+1])
			s = s[i+end+1:]
			continue
		}
		flags := f[2]
		b.WriteString(s[:i])
		at := int64(b.Len())
		if strings.Contains(flags, "l") {
			at--
		}
		if st.first < 0 {
			st.first = at
		}
		b.WriteString(cutMarker(d, l, limit))
		st.dropped += d
		st.lines += l
		st.added += int64(len(tok) + len(flags))
		s = s[i+end+1:]
	}
}

// binaryNote is the text that stands for a binary block the proxy could not
// carry; ok is false when data is not such a replacement.
func (p *Proxy) binaryNote(data []byte, what, mime string) (string, bool) {
	prefix := "scrollback-cut:" + p.nonce + ":"
	if len(data) > 64 || !bytes.HasPrefix(data, []byte(prefix)) {
		return "", false
	}
	n, err := strconv.ParseInt(string(data[len(prefix):]), 10, 64)
	if err != nil {
		return "", false
	}
	return present.BinaryDropped(what, mime, int64(base64.StdEncoding.DecodedLen(int(n))), n, binaryMax), true
}

// mendBinary replaces the binary blocks the cut could not carry by text
// notes saying what they were; changed is false (and content returned
// as it is) when there are none.
func (p *Proxy) mendBinary(content []mcp.Content) (_ []mcp.Content, changed bool) {
	var out []mcp.Content
	for i, c := range content {
		var note string
		var ok bool
		switch c := c.(type) {
		case *mcp.ImageContent:
			note, ok = p.binaryNote(c.Data, "an image", c.MIMEType)
		case *mcp.AudioContent:
			note, ok = p.binaryNote(c.Data, "an audio clip", c.MIMEType)
		case *mcp.EmbeddedResource:
			if c.Resource != nil {
				note, ok = p.binaryNote(c.Resource.Blob, "the resource "+c.Resource.URI, c.Resource.MIMEType)
			}
		}
		if !ok {
			if out != nil {
				out = append(out, c)
			}
			continue
		}
		if out == nil {
			out = append([]mcp.Content(nil), content[:i]...)
		}
		out = append(out, &mcp.TextContent{Text: note})
	}
	if out == nil {
		return content, false
	}
	return out, true
}

// mendContents does for resources/read what mendBinary does for a tool
// result: a blob too large to carry becomes a text note.
func (p *Proxy) mendContents(contents []*mcp.ResourceContents) {
	for i, c := range contents {
		if c == nil {
			continue
		}
		if note, ok := p.binaryNote(c.Blob, "the resource "+c.URI, c.MIMEType); ok {
			contents[i] = &mcp.ResourceContents{URI: c.URI, MIMEType: "text/plain", Text: note, Meta: c.Meta}
		}
	}
}
