package proxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/codemode"
)

// The proxy's own tools repeat what package mcpserver registers for the
// scrollback server; mcpserver does not export its registration, so the
// descriptions and text renderings below are kept short and in step by
// hand.

const readDoc = `Read one page (at most 4096 bytes) of a retained copy, by UTF-8 byte offset, without calling the tool again. Pass the output_id from a previewed result (its footer, or _meta scrollback/output_id) as id, and offset 0 or the nextOffset of the previous page; concatenating the pages gives the copy byte for byte.

hasMore=false: you reached the end of the saved text. complete=false: the saved text itself lacks part of what the tool produced (a cap was crossed), so something not found in it may still exist: say that it is uncertain rather than absent. Ids are valid only in the session that made them.`

const grepDoc = `Search a retained copy (an output_id from a previewed result) for lines matching an RE2 pattern. Returns each match's 1-based line number, its byte offset (a valid read_tool_output offset) and the line, with context lines if asked. When hasMore is true, call again with offset=nextOffset for more matches. complete=false: the copy lacks part of what the tool produced, so no match is not proof of absence.`

// addOwnTools registers read_tool_output and grep_tool_output.
func (s *server) addOwnTools() {
	addTyped(s, &mcp.Tool{
		Name: "read_tool_output", Title: "Read a retained copy", Description: readDoc,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, (*scrollback.Session).ReadToolOutput, pageText)
	addTyped(s, &mcp.Tool{
		Name: "grep_tool_output", Title: "Search a retained copy", Description: grepDoc,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, (*scrollback.Session).GrepToolOutput, grepText)
}

func ptr[T any](v T) *T { return &v }

// addTyped registers one of the session's methods as a tool whose schemas
// are inferred from its input and result types.
func addTyped[In, Out any](s *server, t *mcp.Tool, call func(*scrollback.Session, context.Context, In) (Out, error), text func(In, Out) string) {
	mcp.AddTool(s.srv, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		var zero Out
		sess, err := s.b.session(ctx)
		if err != nil {
			return nil, zero, err
		}
		out, err := call(sess, ctx, in)
		if err != nil {
			return nil, zero, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text(in, out)}}}, out, nil
	})
}

// pageText is the page's text, then where the copy continues.
func pageText(in scrollback.ReadInput, p scrollback.Page) string {
	id, _ := json.Marshal(in.ID)
	switch {
	case p.HasMore:
		return fmt.Sprintf("%s\n[scrollback: bytes %d to %d of %d. More follows: call read_tool_output {\"id\": %s, \"offset\": %d}]", p.Text, in.Offset, p.NextOffset, p.TotalBytes, id, p.NextOffset)
	case p.Complete:
		return fmt.Sprintf("%s\n[scrollback: end of the retained copy (%d bytes); it holds the whole result]", p.Text, p.TotalBytes)
	}
	return fmt.Sprintf("%s\n[scrollback: end of the retained copy (%d bytes), but the copy is incomplete: part of the result was not saved (a cap was crossed). Something not found in it may still have existed]", p.Text, p.TotalBytes)
}

// grepText lists the matches one per line, as grep -n does, then where
// the search continues.
func grepText(in scrollback.GrepInput, r scrollback.GrepResult) string {
	var b strings.Builder
	for _, m := range r.Matches {
		for _, c := range m.Before {
			fmt.Fprintf(&b, "%d-%s\n", c.Line, c.Text)
		}
		fmt.Fprintf(&b, "%d:%s\n", m.Line, m.Text)
		for _, c := range m.After {
			fmt.Fprintf(&b, "%d-%s\n", c.Line, c.Text)
		}
	}
	id, _ := json.Marshal(in.ID)
	switch {
	case r.HasMore:
		fmt.Fprintf(&b, "[scrollback: %d matches shown; more may follow: call grep_tool_output {\"id\": %s, \"pattern\": ..., \"offset\": %d}]", len(r.Matches), id, r.NextOffset)
	case !r.Complete:
		fmt.Fprintf(&b, "[scrollback: %d matches; the copy is incomplete, so a line not found may still have existed]", len(r.Matches))
	default:
		fmt.Fprintf(&b, "[scrollback: %d matches; end of the retained copy]", len(r.Matches))
	}
	return b.String()
}

// codeTools are the upstream tools as Code Mode tools: a script calls
// tools.NAME(args) and gets the JSON of the result's structuredContent
// when it has one, else its text as a string. An error result is thrown
// in the script with its text.
func (p *Proxy) codeTools(tools []*mcp.Tool) []codemode.Tool {
	var out []codemode.Tool
	for _, t := range tools {
		if t == nil || ownTools[t.Name] || t.Name == "run_command" || t.Name == "read_file" {
			continue
		}
		schema, _ := json.Marshal(t.InputSchema)
		name := t.Name
		out = append(out, codemode.Tool{
			Name:        name,
			Description: firstParagraph(t.Description),
			InputSchema: schema,
			Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				res, err := p.call(ctx, name, args)
				if err != nil {
					return nil, err
				}
				if res.IsError {
					text, _ := p.resultText(res, 4096, 4096)
					return nil, fmt.Errorf("%s", text)
				}
				return p.codeValue(res)
			},
		})
	}
	return out
}

func firstParagraph(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n\n")
	return cutString(s, 400)
}

// addRunCode (re)registers run_code over the session's tools and tools;
// called with s.mu held whenever the upstream's tools change.
func (s *server) addRunCode(tools []*mcp.Tool) {
	extra := s.p.codeTools(tools)
	t := &mcp.Tool{
		Name:        codemode.Name,
		Title:       "Run JavaScript that calls tools",
		Description: scrollback.CodeDescription(extra...),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}
	mcp.AddTool(s.srv, t, func(ctx context.Context, _ *mcp.CallToolRequest, in scrollback.RunCodeInput) (*mcp.CallToolResult, scrollback.RunCodeResult, error) {
		sess, err := s.b.session(ctx)
		if err != nil {
			return nil, scrollback.RunCodeResult{}, err
		}
		out, err := sess.RunCode(ctx, in, extra...)
		if err != nil {
			return nil, out, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: codeText(out)}}}, out, nil
	})
}

// codeText is the script's value (its preview), then its logs, its error
// and the copies made during the run.
func codeText(r scrollback.RunCodeResult) string {
	var b strings.Builder
	b.WriteString(r.Preview)
	if r.Logs != "" {
		b.WriteString("\n[console]\n" + r.Logs)
	}
	if r.Error != nil {
		e, _ := json.Marshal(r.Error)
		b.WriteString("\n[scrollback: the script failed: " + string(e) + "]")
	}
	for _, ref := range r.Retained {
		if ref.OutputID != "" {
			fmt.Fprintf(&b, "\n[scrollback: call %d (%s) was saved as output_id %s, %d bytes, complete=%t: read it with read_tool_output]", ref.Call, ref.Tool, ref.OutputID, ref.TotalBytes, ref.Complete)
		} else {
			fmt.Fprintf(&b, "\n[scrollback: call %d (%s) could not be saved: %s]", ref.Call, ref.Tool, ref.RecoveryError)
		}
	}
	return b.String()
}
