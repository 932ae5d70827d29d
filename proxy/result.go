package proxy

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/capture"
	"github.com/scrollback-dev/scrollback/internal/utf8x"
	"github.com/scrollback-dev/scrollback/mcpserver"
	"github.com/scrollback-dev/scrollback/present"
	"github.com/scrollback-dev/scrollback/preview"
)

// The _meta keys of a previewed result: its recovery reference (package
// present's).
const (
	MetaSession    = present.MetaSession    // the session holding the copy
	MetaOutputID   = present.MetaOutputID   // the copy's id, for read_tool_output
	MetaTotalBytes = present.MetaTotalBytes // the copy's length
	MetaComplete   = present.MetaComplete   // whether the copy holds the whole text
	MetaRecovery   = present.MetaRecovery   // "available" or "unavailable"
)

// copyText is the text of a result as the proxy retains it.
type copyText struct {
	data     []byte       // at most the max asked for, head and tail kept past it
	complete bool         // data holds all of the text the upstream produced
	gap      *preview.Gap // where data lacks a run of the text; nil = nowhere
	original int64        // bytes of text the upstream produced
}

// resultText is the text of a result as the model would see it: its text
// blocks joined by "\n", or, when it has none, its structuredContent as
// JSON (followed by that JSON when just one of the two exceeds budget and
// the text is not that JSON already). Text the proxy
// cut in transit (cutReader) has a marker line at the gap; past max bytes
// it keeps a head and a tail with a marker line between them, as a
// command's copy does (package capture).
func (p *Proxy) resultText(res *mcp.CallToolResult, max, budget int) copyText {
	cp := capture.New(capture.Limits{Copy: int64(max), Stdout: int64(max)})
	w := &mendWriter{p: p, w: cp.Stdout(), st: mendStats{first: -1}}
	n, blocks := 0, 0
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		if blocks > 0 {
			w.write("\n")
		}
		blocks++
		n += len(tc.Text)
		w.write(tc.Text)
	}
	sj := p.structuredJSON(res)
	if blocks == 0 && sj != nil {
		w.write(string(sj))
	} else if sj != nil && (n > budget) != (len(sj) > budget) && !sameJSON([]byte(joinedText(res)), sj) {
		// Over the budget, the structured content is not passed on: it is
		// retained after the text when one of the two is within the budget
		// (a small object beside a long text, or the other way round).
		// When both are over it the text is taken to carry it, as the MCP
		// specification asks (a file server's {content: TEXT}): the copy
		// is the text, which it would otherwise hold twice.
		w.write("\n\n[structuredContent]\n")
		w.write(string(sj))
	}
	r := cp.Result()
	t := copyText{data: r.Copy, complete: r.Complete && w.st.dropped == 0, original: w.n - w.st.added + w.st.dropped}
	switch {
	case w.st.dropped > 0 && r.Gap == nil:
		t.gap = &preview.Gap{Offset: w.st.first, Bytes: w.st.dropped, Lines: w.st.lines}
	case r.Gap != nil:
		t.gap = &preview.Gap{Offset: r.Gap.Offset, Bytes: r.Gap.Bytes + w.st.dropped, Lines: r.Gap.Lines + w.st.lines}
	}
	return t
}

// mendWriter writes text with its cut tokens mended, counting what it saw.
type mendWriter struct {
	p  *Proxy
	w  io.Writer
	n  int64 // bytes given to write, tokens included
	at int64 // bytes written out
	st mendStats
}

func (m *mendWriter) write(s string) {
	m.n += int64(len(s))
	out, st := m.p.mend(s)
	if st.first >= 0 && m.st.first < 0 {
		m.st.first = m.at + st.first
	}
	m.st.dropped += st.dropped
	m.st.lines += st.lines
	m.st.added += st.added
	m.at += int64(len(out))
	io.WriteString(m.w, out)
}

// joinedText is the result's text blocks joined by "\n".
func joinedText(res *mcp.CallToolResult) string {
	var b strings.Builder
	blocks := 0
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			if blocks > 0 {
				b.WriteByte('\n')
			}
			blocks++
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// joinText joins the result's text blocks by "\n", keeping at most max
// bytes; n is the length of the whole join.
func (p *Proxy) joinText(res *mcp.CallToolResult, max int) (b []byte, n, blocks int, cut bool) {
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			continue
		}
		if blocks > 0 {
			n++
			b = appendMax(b, "\n", max)
		}
		blocks++
		n += len(tc.Text)
		b = appendMax(b, tc.Text, max)
		cut = cut || p.wasCut(tc.Text)
	}
	return b, n, blocks, cut
}

// appendMax appends s to b without growing b past max bytes, cutting at a
// character boundary.
func appendMax(b []byte, s string, max int) []byte {
	room := max - len(b)
	if room <= 0 {
		return b
	}
	return append(b, utf8x.Cut(s, room)...)
}

// wasCut reports whether cutReader cut a string.
func (p *Proxy) wasCut(s string) bool { return hasCut([]byte(s), p.nonce) }

// structuredJSON is the result's structuredContent as JSON; nil when it
// has none.
func (p *Proxy) structuredJSON(res *mcp.CallToolResult) []byte {
	if res.StructuredContent == nil {
		return nil
	}
	if raw, ok := res.StructuredContent.(json.RawMessage); ok {
		return raw
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil
	}
	return b
}

// sameJSON reports whether text is the JSON value sj (compared compact).
func sameJSON(text, sj []byte) bool {
	t := bytes.TrimSpace(text)
	if len(t) == 0 || (t[0] != '{' && t[0] != '[') || len(t) < len(sj)/2 {
		return false
	}
	var a, b bytes.Buffer
	if json.Compact(&a, t) != nil || json.Compact(&b, sj) != nil {
		return false
	}
	if bytes.Equal(a.Bytes(), b.Bytes()) {
		return true
	}
	// Key order may differ: compare the values.
	var va, vb any
	if json.Unmarshal(a.Bytes(), &va) != nil || json.Unmarshal(b.Bytes(), &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// fits reports whether a result passes through untouched: its text and its
// structured content each within budget, and nothing cut in transit.
func (p *Proxy) fits(res *mcp.CallToolResult, budget int) bool {
	n, blocks := 0, 0
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			if blocks > 0 {
				n++
			}
			blocks++
			n += len(tc.Text)
			if n > budget || p.wasCut(tc.Text) {
				return false
			}
		}
	}
	if sj := p.structuredJSON(res); sj != nil && (len(sj) > budget || hasCut(sj, p.nonce)) {
		return false
	}
	text, _, blocks, _ := p.joinText(res, budget+1)
	if blocks == 0 {
		return true // no text; structured content within budget, or none
	}
	return preview.Fits(text, budget)
}

// shape turns an upstream result into what the client gets: the result
// itself when it fits the budget; else a preview of its text, with the
// footer and the recovery reference, and its other blocks (images, audio,
// links, embedded resources) unchanged.
func (s *server) shape(ctx context.Context, b *mcpserver.Binding, tool string, args json.RawMessage, res *mcp.CallToolResult) *mcp.CallToolResult {
	p := s.p
	budget := p.budget(tool)
	if mended, changed := p.mendBinary(res.Content); changed {
		r := *res
		r.Content = mended
		res = &r
	}
	res = s.shapeEmbedded(ctx, tool, args, res)
	if p.fits(res, budget) {
		return res
	}
	t := p.resultText(res, p.copyCap(), budget)
	shown, sess := s.retain(ctx, b, tool, callSource(tool, args), t, budget)
	out := &mcp.CallToolResult{IsError: res.IsError, Meta: mcp.Meta{}}
	maps.Copy(out.Meta, res.Meta)
	maps.Copy(out.Meta, retainedMeta(sess, shown))
	placed := false
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			if !placed {
				// The preview stands where the first text block stood,
				// with its annotations (audience, priority).
				out.Content = append(out.Content, &mcp.TextContent{Text: shown.Preview, Annotations: tc.Annotations})
				placed = true
			}
			continue
		}
		out.Content = append(out.Content, c)
	}
	if !placed {
		out.Content = append([]mcp.Content{&mcp.TextContent{Text: shown.Preview}}, out.Content...)
	}
	if shown.Recovery == scrollback.RecoveryUnavailable {
		out.Content = append(out.Content, &mcp.TextContent{Text: present.Unsaved(shown.RecoveryError)})
	}
	if shown.OutputID != "" {
		out.Content = append(out.Content, mcpserver.OutputLink(shown.OutputID, shown.TotalBytes))
	}
	return out
}

// shapeEmbedded previews in place the text of each embedded resource of
// res over the tool's budget, as a prompt's (shapePrompt): it enters the
// conversation as a text block's does. Each is retained on its own, with
// a resource_link to its copy last; the first one's reference is in
// _meta, unless the text blocks' own preview puts theirs there.
func (s *server) shapeEmbedded(ctx context.Context, tool string, args json.RawMessage, res *mcp.CallToolResult) *mcp.CallToolResult {
	var out *mcp.CallToolResult
	var links []mcp.Content
	for i, c := range res.Content {
		er, ok := c.(*mcp.EmbeddedResource)
		if !ok {
			continue
		}
		shown, m := s.previewEmbedded(ctx, tool, callSource(tool, args), er)
		if shown == nil {
			continue
		}
		if out == nil {
			r := *res
			r.Content = slices.Clone(res.Content)
			out = &r
		}
		out.Content[i] = shown
		mergeMeta(&out.Meta, m)
		if id, _ := m[MetaOutputID].(string); id != "" {
			size, _ := m[MetaTotalBytes].(int64)
			links = append(links, mcpserver.OutputLink(id, size))
		}
	}
	if out == nil {
		return res
	}
	out.Content = append(out.Content, links...)
	return out
}

// previewEmbedded is the embedded resource er as it enters the
// conversation when its text is over op's budget: its text previewed and
// retained as a text block's is (source, then its URI, says where it came
// from), its URI, annotations and _meta kept; and the copy's recovery
// reference. nil, nil when its text is shown whole or it has none.
func (s *server) previewEmbedded(ctx context.Context, op, source string, er *mcp.EmbeddedResource) (*mcp.EmbeddedResource, mcp.Meta) {
	if er.Resource == nil || er.Resource.Text == "" {
		return nil, nil
	}
	pv, m := s.retainText(ctx, op, source+" "+er.Resource.URI, er.Resource.Text)
	if m == nil {
		return nil, nil
	}
	rc := *er.Resource
	rc.Text = pv
	return &mcp.EmbeddedResource{Resource: &rc, Annotations: er.Annotations, Meta: er.Meta}, m
}

// retain shows an upstream's text t as a result's text is shown: whole
// within budget, else a preview whose footer leads to a copy retained in
// b's session, or says why none could be saved. sess is nil when there is
// no session to save in.
func (s *server) retain(ctx context.Context, b *mcpserver.Binding, what, source string, t copyText, budget int) (scrollback.Shown, *scrollback.Session) {
	status := ""
	if t.original > int64(len(t.data)) && t.gap != nil {
		status = present.UpstreamCut(t.original)
	}
	sess, err := b.Session(ctx)
	if err != nil {
		pv := preview.Render(t.data, preview.Options{Budget: budget}, preview.Footer{Unavailable: err.Error(), Gap: t.gap, Status: status})
		return scrollback.Shown{
			ShownText: scrollback.ShownText{Preview: pv.Text, Truncated: pv.Truncated},
			ShownCopy: scrollback.ShownCopy{TotalBytes: int64(len(t.data)), Complete: t.complete,
				Recovery: scrollback.RecoveryUnavailable, RecoveryError: present.NotSaved(err.Error())},
		}, nil
	}
	return sess.Retain(ctx, scrollback.RetainInput{Tool: what, Source: source, Data: t.data, Complete: t.complete, Budget: budget,
		Gap: t.gap, Status: status}), sess
}

// retainedMeta is the _meta of a previewed result (present.RetainedMeta).
func retainedMeta(sess *scrollback.Session, shown scrollback.Shown) mcp.Meta {
	id := ""
	if sess != nil {
		id = sess.ID()
	}
	return present.RetainedMeta(id, shown.OutputID, shown.TotalBytes, shown.Complete, shown.Recovery)
}

// callSource names a call in the session's copy list.
func callSource(tool string, args json.RawMessage) string {
	s := fmt.Sprintf("%s %s", tool, bytes.TrimSpace(args))
	return cutString(s, 200)
}

// codeValue is what a script gets from an upstream tool: the JSON of its
// structuredContent when it has one (so that the script can pick fields),
// else its text as a JSON string, cut at the copy cap; a result with
// other blocks (an image, a resource link, an embedded resource) is
// {content: [...]}, every block as MCP gives it (contentValue).
func (p *Proxy) codeValue(res *mcp.CallToolResult) (json.RawMessage, error) {
	if sj := p.structuredJSON(res); sj != nil && len(sj) <= p.copyCap() {
		return sj, nil
	}
	for _, c := range res.Content {
		if _, ok := c.(*mcp.TextContent); !ok {
			return p.contentValue(res)
		}
	}
	return json.Marshal(string(p.resultText(res, p.copyCap(), p.copyCap()).data))
}

// contentValue is {content: [...]}: each block's MCP JSON, text mended
// where the proxy cut it in transit. Past the copy cap, binary data
// (data, or an embedded resource's blob) is left out, its size said in
// dataBytes, so that the script still sees what each block was.
func (p *Proxy) contentValue(res *mcp.CallToolResult) (json.RawMessage, error) {
	blocks := make([]map[string]any, 0, len(res.Content))
	size := 0
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			tc2 := *tc
			tc2.Text, _ = p.mend(tc.Text)
			c = &tc2
		}
		raw, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		size += len(raw)
		blocks = append(blocks, m)
	}
	if size > p.copyCap() {
		for _, m := range blocks {
			if d, ok := m["data"].(string); ok {
				delete(m, "data")
				m["dataBytes"] = base64.StdEncoding.DecodedLen(len(d))
			}
			if r, ok := m["resource"].(map[string]any); ok {
				if b, ok := r["blob"].(string); ok {
					delete(r, "blob")
					r["blobBytes"] = base64.StdEncoding.DecodedLen(len(b))
				}
			}
		}
	}
	return json.Marshal(map[string]any{"content": blocks})
}

// toolError is a tool error carrying err, which mcpserver.FinishResults
// (installed on every server of the proxy) finishes as it finishes
// scrollback's own: the session and the error's kind in _meta, the message
// cut to size.
func toolError(err error) *mcp.CallToolResult {
	var r mcp.CallToolResult
	r.SetError(err)
	return &r
}
