package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/internal/procgroup"
)

// tool is one MCP tool: its name and the function that adds it to a server
// bound to a session. Adding a tool to scrollback's MCP server is one entry
// here and one small function calling register.
type tool struct {
	name string
	add  func(*mcp.Server, *Binding)
}

// tools are the tools every server offers, in the order tools/list shows
// them.
var tools = []tool{
	{"run_command", addRunCommand},
	{"read_tool_output", addReadToolOutput},
	{"read_file", addReadFile},
	{"grep_tool_output", addGrepToolOutput},
	{"query_tool_output", addQueryToolOutput},
	{"run_code", addRunCode},
}

// AddTools adds scrollback's session tools to srv, all acting on b's
// session: the tools named (each one of ToolNames), or all of them when
// names is empty. Each result carries what the package doc describes,
// except its _meta: install FinishResults on srv, as NewServer does, to give
// every result and failure its session and every failure its kind. A
// name that is not a session tool is an error naming the tools there are,
// and then nothing is added.
func AddTools(srv *mcp.Server, b *Binding, names ...string) error {
	if len(names) == 0 {
		names = ToolNames()
	}
	adds := make([]func(*mcp.Server, *Binding), len(names))
	for i, name := range names {
		j := slices.IndexFunc(tools, func(t tool) bool { return t.name == name })
		if j < 0 {
			return fmt.Errorf("mcpserver: no session tool named %q; the tools are %s", name, strings.Join(ToolNames(), ", "))
		}
		adds[i] = tools[j].add
	}
	for _, add := range adds {
		add(srv, b)
	}
	return nil
}

// register adds the tool t to srv. Its work is call, a method of
// scrollback.Session; its input and output schemas are inferred from In and
// Out. text renders the result's text blocks: the first is what the model
// reads (a preview with its footer, a page's text), never the JSON of the
// result, which goes to structuredContent. An error from call becomes a
// tool error (isError) carrying the error's message.
func register[In, Out any](srv *mcp.Server, b *Binding, t *mcp.Tool,
	call func(*scrollback.Session, context.Context, In) (Out, error),
	text func(In, Out) []string,
) {
	mcp.AddTool(srv, t, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		var zero Out
		s, err := b.Session(ctx)
		if err != nil {
			return nil, zero, err
		}
		out, err := call(s, ctx, in)
		stopped := false
		if err != nil {
			// A command stopped because the server is shutting down still
			// has its whole result (killed, with the output before): the
			// client gets it, saying why.
			rc, ok := any(out).(scrollback.RunCommandResult)
			if !ok || rc.Signal == "" && rc.ExitCode == nil || !errors.Is(context.Cause(ctx), ErrStopping) {
				return nil, zero, err
			}
			stopped = true
		}
		res := &mcp.CallToolResult{} // FinishResults adds the session to _meta
		for _, t := range text(in, out) {
			res.Content = append(res.Content, &mcp.TextContent{Text: t})
		}
		if stopped {
			res.Content = append(res.Content, &mcp.TextContent{Text: "scrollback: the server is shutting down and stopped this command after its drain period; its process group was killed. Run it again once the server is back."})
		}
		appendOutputLink(res, out)
		return res, out, nil
	})
}

func ptr[T any](v T) *T { return &v }

const runCommandDoc = `Run a shell command with /bin/sh -c and get its output: stdout and stderr merged in the order they were written.

Output up to 24 KiB is shown whole. Larger output is NOT shown whole: you get a preview (its head and its tail) whose footer says how many bytes and lines you did not see, and the exact read_tool_output call (output_id and offset) that continues. The rest is saved as a retained copy in this session: page through it with read_tool_output instead of running the command again.

A preview is not the whole result. Before claiming that a line, field or record is absent from the output, read the retained copy, or narrow the command itself (grep, head, the tool's own filters or page tokens). complete=false means the copy lacks part of what the command wrote (a capture cap was crossed): then absence from it proves nothing, and you should say the answer is uncertain.

A non-zero exit, a signal and a timeout are results, not errors: exit_code, signal and timed_out say how it ended, with the output that came before.`

const readToolOutputDoc = `Read one page (at most 4096 bytes) of a retained copy, by UTF-8 byte offset, without running anything again. Pass the output_id from a truncated result as id, and offset 0 or the nextOffset of the previous page; concatenating the pages gives the copy byte for byte.

hasMore=true: more text follows at nextOffset. hasMore=false: you reached the end of the saved text. complete is a different question: complete=false means the saved text itself may lack part of what the tool produced (a cap was crossed), so something you did not find in it may still have existed: say that it is uncertain rather than absent.

Ids are valid only in the session that made them. A copy lives until its session has gone unused for the retention period (30 days by default), or until a storage quota evicts it first (least recently read first): reading it then is an error of kind not_found (retention) or evicted (quota), and only running the source again shows it. An offset inside a multi-byte character is refused with the nearest valid offsets.`

const readFileDoc = `Read one page of a text file: up to limit lines (default 2000) and at most 24 KiB, starting at a 1-based line or at an absolute byte_offset (which wins over line). The line is located in the whole file, however large. A line longer than the page is cut at a character boundary and continues at nextByteOffset.

hasMore=true: the file goes on; continue with byte_offset=nextByteOffset (or line=nextLine). Do not claim that something is absent from a file you have not read to the end (hasMore=false).

Private keys, credential files and .env files are refused, and so are binary files and, when the server is confined to a root directory, paths outside it.`

func addRunCommand(srv *mcp.Server, b *Binding) {
	register(srv, b, &mcp.Tool{
		Name:        "run_command",
		Title:       "Run a shell command",
		Description: procgroup.ForShell(runCommandDoc),
		Annotations: &mcp.ToolAnnotations{Title: "Run a shell command", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, (*scrollback.Session).RunCommand, runCommandText)
}

func addReadFile(srv *mcp.Server, b *Binding) {
	register(srv, b, &mcp.Tool{
		Name:        "read_file",
		Title:       "Read a file",
		Description: readFileDoc,
		Annotations: &mcp.ToolAnnotations{Title: "Read a file", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, (*scrollback.Session).ReadFile, filePageText)
}

const grepToolOutputDoc = `Search a retained copy for lines matching an RE2 regular expression, without running anything again. Each match gives its 1-based line number, the byte offset where its text starts (a valid read_tool_output offset, to read around it) and the line's text, with context lines before and after when asked. Every byte of every line is searched; a line over 1 KiB shows a 1 KiB window around the match. count=true returns only the number of matching lines.

hasMore=true: more matches may follow; search again with offset=nextOffset. A search that finds nothing in a copy with complete=false does not prove absence: the copy lacks part of what the tool produced, so say the answer is uncertain.`

func addGrepToolOutput(srv *mcp.Server, b *Binding) {
	register(srv, b, &mcp.Tool{
		Name:        "grep_tool_output",
		Title:       "Search a retained copy",
		Description: grepToolOutputDoc,
		Annotations: &mcp.ToolAnnotations{Title: "Search a retained copy", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, (*scrollback.Session).GrepToolOutput, grepText)
}

func addRunCode(srv *mcp.Server, b *Binding) { AddRunCode(srv, b) }

// AddRunCode adds run_code to srv, acting on b's session. Its scripts can
// call the session's tools and, besides them, extra (a proxy's upstream
// tools, say), which the tool's description then lists. Adding it again
// replaces it: call it whenever extra changes.
func AddRunCode(srv *mcp.Server, b *Binding, extra ...codemode.Tool) {
	register(srv, b, &mcp.Tool{
		Name:        "run_code",
		Title:       "Run code that calls the tools",
		Description: scrollback.CodeDescription(extra...),
		Annotations: &mcp.ToolAnnotations{Title: "Run code that calls the tools", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, func(s *scrollback.Session, ctx context.Context, in scrollback.RunCodeInput) (scrollback.RunCodeResult, error) {
		return s.RunCode(ctx, in, extra...)
	}, runCodeText)
}

// grepText lists the matches as "LINE:OFFSET: text", context lines with
// "-", then where the search continues.
func grepText(in scrollback.GrepInput, r scrollback.GrepResult) []string {
	if r.Matches == nil {
		return grepCountText(in, r)
	}
	var b strings.Builder
	for _, m := range r.Matches {
		for _, c := range m.Before {
			fmt.Fprintf(&b, "%d-%d- %s\n", c.Line, c.Offset, c.Text)
		}
		fmt.Fprintf(&b, "%d:%d: %s\n", m.Line, m.Offset, m.Text)
		for _, c := range m.After {
			fmt.Fprintf(&b, "%d-%d- %s\n", c.Line, c.Offset, c.Text)
		}
	}
	if len(r.Matches) == 0 {
		b.WriteString("(no matching lines)\n")
	}
	var where string
	switch {
	case r.HasMore:
		where = fmt.Sprintf("[scrollback: %d matches shown (line:offset: text). More may follow: call grep_tool_output with the same pattern and \"offset\": %d]", len(r.Matches), r.NextOffset)
	case !r.Complete:
		where = fmt.Sprintf("[scrollback: searched to the end of the retained copy (%d bytes), but the copy is incomplete: a line not found here may still have existed; say so rather than calling it absent]", r.TotalBytes)
	default:
		where = fmt.Sprintf("[scrollback: searched the whole retained copy (%d bytes); it holds everything the tool produced]", r.TotalBytes)
	}
	return []string{b.String(), where}
}

// grepCountText says how many lines match, then whether that is all of
// them.
func grepCountText(in scrollback.GrepInput, r scrollback.GrepResult) []string {
	from := ""
	if in.Offset > 0 {
		from = fmt.Sprintf(" from offset %d", in.Offset)
	}
	count := fmt.Sprintf("%d lines match%s", r.Count, from)
	if r.Count == 1 {
		count = "1 line matches" + from
	}
	if !r.Complete {
		return []string{count, fmt.Sprintf("[scrollback: counted to the end of the retained copy (%d bytes), but the copy is incomplete: lines it lacks were not counted, so the true count may be higher]", r.TotalBytes)}
	}
	return []string{count, fmt.Sprintf("[scrollback: counted over the whole retained copy (%d bytes); it holds everything the tool produced]", r.TotalBytes)}
}

// runCodeText is the return value's preview, then the script's error, its
// logs and the copies made during the run.
func runCodeText(in scrollback.RunCodeInput, r scrollback.RunCodeResult) []string {
	out := []string{r.Preview}
	if r.Preview == "" {
		out[0] = "(the script returned nothing)"
	}
	if r.Error != nil {
		e, _ := json.Marshal(r.Error)
		out = append(out, "[scrollback: the script stopped with an error: "+string(e)+"]")
	}
	if r.Logs != "" {
		out = append(out, "console:\n"+r.Logs)
	}
	if len(r.Retained) > 0 {
		e, _ := json.Marshal(r.Retained)
		out = append(out, "[scrollback: copies retained during the run; read them with read_tool_output: "+string(e)+"]")
	}
	return out
}

// runCommandText is the preview, footer included, then how the command
// ended when that was not a zero exit and the preview's footer does not
// already say so.
func runCommandText(in scrollback.RunCommandInput, r scrollback.RunCommandResult) []string {
	out := []string{r.Preview}
	if r.Preview == "" {
		out[0] = "(the command wrote no output)"
	}
	if r.Truncated {
		return out
	}
	switch {
	case r.TimedOut:
		out = append(out, fmt.Sprintf("[scrollback: the command timed out after %d ms and its process group was killed; above is what it wrote before]", r.DurationMS))
	case r.Signal != "":
		out = append(out, fmt.Sprintf("[scrollback: the command was killed by signal %s]", r.Signal))
	case r.ExitCode != nil && *r.ExitCode != 0:
		out = append(out, fmt.Sprintf("[scrollback: the command exited with status %d]", *r.ExitCode))
	}
	if r.Recovery == scrollback.RecoveryUnavailable {
		out = append(out, "[scrollback: "+r.RecoveryError+"]")
	}
	return out
}

// pageText is the page's text exactly, then where the copy continues.
func pageText(in scrollback.ReadInput, p scrollback.Page) []string {
	var where string
	switch {
	case p.HasMore:
		// The line every page but the last ends with, built without fmt:
		// read_tool_output is the call a model makes most.
		b := make([]byte, 0, 160+len(in.ID))
		b = append(b, "[scrollback: bytes "...)
		b = strconv.AppendInt(b, in.Offset, 10)
		b = append(b, " to "...)
		b = strconv.AppendInt(b, p.NextOffset, 10)
		b = append(b, " of "...)
		b = strconv.AppendInt(b, p.TotalBytes, 10)
		b = append(b, ". More follows: call read_tool_output {\"id\": "...)
		b = append(b, jsonString(in.ID)...)
		b = append(b, ", \"offset\": "...)
		b = strconv.AppendInt(b, p.NextOffset, 10)
		b = append(b, "}]"...)
		where = string(b)
	case p.Complete:
		where = fmt.Sprintf("[scrollback: end of the retained copy (%d bytes); it holds everything the tool produced]", p.TotalBytes)
	default:
		where = fmt.Sprintf("[scrollback: end of the retained copy (%d bytes), but the copy is incomplete: part of what the tool produced was not saved (a cap was crossed). Something not found in it may still have existed: say so rather than calling it absent]", p.TotalBytes)
	}
	return []string{p.Text, where}
}

// filePageText is the file's lines exactly, then where the file continues.
func filePageText(in scrollback.ReadFileInput, p scrollback.FilePage) []string {
	var where string
	if p.HasMore {
		where = fmt.Sprintf("[scrollback: lines %d to %d of a %d-byte file. More follows: call read_file {\"path\": %s, \"byte_offset\": %d}]",
			p.StartLine, p.EndLine, p.TotalBytes, jsonString(in.Path), p.NextByteOffset)
	} else {
		where = fmt.Sprintf("[scrollback: end of the file (%d bytes)]", p.TotalBytes)
	}
	return []string{p.Text, where}
}

// jsonString quotes s as a JSON string, for calls shown to the model.
func jsonString(s string) string {
	if plainID(s) {
		return `"` + s + `"`
	}
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// plainID reports whether s needs no escaping in JSON: letters, digits and
// underscores, as every id scrollback makes.
func plainID(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
