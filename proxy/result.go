package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/internal/utf8x"
	"github.com/scrollback-dev/scrollback/mcpserver"
	"github.com/scrollback-dev/scrollback/preview"
)

// The _meta keys of a previewed result: its recovery reference.
const (
	MetaSession    = mcpserver.MetaSession   // the session holding the copy
	MetaOutputID   = "scrollback/output_id"  // the copy's id, for read_tool_output
	MetaTotalBytes = "scrollback/totalBytes" // the copy's length
	MetaComplete   = "scrollback/complete"   // whether the copy holds the whole text
	MetaRecovery   = "scrollback/recovery"   // "available" or "unavailable"
)

// resultText is the text of a result as the model would see it: its text
// blocks joined by "\n", or, when it has none, its structuredContent as
// JSON (followed by that JSON when only it exceeds budget). It holds at
// most max bytes (cut at a character boundary), and
// complete says whether that is all of it. cut reports that cutReader cut
// part of the message in transit.
func (p *Proxy) resultText(res *mcp.CallToolResult, max, budget int) (text []byte, complete bool) {
	b, n, blocks, cut := p.joinText(res, max)
	sj := p.structuredJSON(res)
	if blocks == 0 && sj != nil {
		n = len(sj)
		b = appendMax(b, string(sj), max)
		cut = cut || bytes.Contains(sj, []byte(p.nonce))
	} else if sj != nil && n <= budget && len(sj) > budget && !sameJSON(b, sj) {
		// The text fits, so the structured content is what does not: it
		// is retained after the text, which does not already carry it.
		const sep = "\n\n[structuredContent]\n"
		n += len(sep) + len(sj)
		b = appendMax(b, sep, max)
		b = appendMax(b, string(sj), max)
		cut = cut || bytes.Contains(sj, []byte(p.nonce))
	}
	return b, n <= max && !cut
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

// wasCut reports whether cutReader cut a string, whose note ends it.
func (p *Proxy) wasCut(s string) bool {
	tail := s[max(0, len(s)-200):]
	return strings.Contains(tail, p.nonce)
}

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
	if sj := p.structuredJSON(res); sj != nil && (len(sj) > budget || bytes.Contains(sj, []byte(p.nonce))) {
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
func (p *Proxy) shape(ctx context.Context, b *mcpserver.Binding, tool string, args json.RawMessage, res *mcp.CallToolResult) *mcp.CallToolResult {
	budget := p.budget(tool)
	if p.fits(res, budget) {
		return res
	}
	text, complete := p.resultText(res, p.copyCap(), budget)
	var shown scrollback.Shown
	sess, err := b.Session(ctx)
	if err == nil {
		shown = sess.Retain(ctx, scrollback.RetainInput{
			Tool: tool, Source: callSource(tool, args), Data: text, Complete: complete, Budget: budget,
		})
	} else {
		pv := preview.Render(text, preview.Options{Budget: budget}, preview.Footer{Unavailable: err.Error()})
		shown = scrollback.Shown{
			ShownText: scrollback.ShownText{Preview: pv.Text, Truncated: pv.Truncated},
			ShownCopy: scrollback.ShownCopy{TotalBytes: int64(len(text)), Complete: complete,
				Recovery: scrollback.RecoveryUnavailable, RecoveryError: err.Error()},
		}
	}

	out := &mcp.CallToolResult{IsError: res.IsError, Meta: mcp.Meta{}}
	maps.Copy(out.Meta, res.Meta)
	if sess != nil {
		out.Meta[MetaSession] = sess.ID()
	}
	out.Meta[MetaTotalBytes] = shown.TotalBytes
	out.Meta[MetaComplete] = shown.Complete
	out.Meta[MetaRecovery] = shown.Recovery
	if shown.OutputID != "" {
		out.Meta[MetaOutputID] = shown.OutputID
	}
	placed := false
	for _, c := range res.Content {
		if _, ok := c.(*mcp.TextContent); ok {
			if !placed {
				out.Content = append(out.Content, &mcp.TextContent{Text: shown.Preview})
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
		out.Content = append(out.Content, &mcp.TextContent{Text: "[scrollback: " + shown.RecoveryError + "]"})
	}
	return out
}

// callSource names a call in the session's copy list.
func callSource(tool string, args json.RawMessage) string {
	s := fmt.Sprintf("%s %s", tool, bytes.TrimSpace(args))
	return cutString(s, 200)
}

// codeValue is what a script gets from an upstream tool: the JSON of its
// structuredContent when it has one (so that the script can pick fields),
// else its text as a JSON string. The text is cut at the copy cap.
func (p *Proxy) codeValue(res *mcp.CallToolResult) (json.RawMessage, error) {
	if sj := p.structuredJSON(res); sj != nil && len(sj) <= p.copyCap() {
		return sj, nil
	}
	text, _ := p.resultText(res, p.copyCap(), p.copyCap())
	return json.Marshal(string(text))
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
