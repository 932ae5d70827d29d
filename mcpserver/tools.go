package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/internal/procgroup"
	"github.com/scrollback-dev/scrollback/present"
)

// tool is one MCP tool: its name and the function that adds it to a server
// bound to a session. Adding a tool to scrollback's MCP server is one entry
// here and one small function calling register.
type tool struct {
	name string
	add  func(*mcp.Server, *Binding)
}

// tools are the tools every server offers, in the order they are added
// (tools/list sorts them by name).
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
	mcp.AddTool(srv, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		var zero Out
		s, err := b.Session(ctx)
		if err != nil {
			return nil, zero, err
		}
		stop := reportProgress(ctx, req)
		out, err := call(s, ctx, in)
		stop()
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
			res.Content = append(res.Content, &mcp.TextContent{Text: present.Stopped})
		}
		appendOutputLink(res, out)
		return res, out, nil
	})
}

// progressEvery is how often a call that gave a progressToken hears that
// it is still running.
var progressEvery = 5 * time.Second

// reportProgress sends req's client, when the request carries a
// progressToken, a progress notification every progressEvery until stop
// is called: the seconds the call has run, which only grow, and a message
// saying so. A command's output cannot be counted before it ends, so
// there is no total; what the notifications give a client is that the
// call is alive, so that one that resets its request timeout on progress
// (the TypeScript SDK's resetTimeoutOnProgress) waits for a long command
// instead of cancelling it.
func reportProgress(ctx context.Context, req *mcp.CallToolRequest) (stop func()) {
	if req == nil || req.Session == nil || req.Params == nil || req.Params.GetProgressToken() == nil {
		return func() {}
	}
	token, name := req.Params.GetProgressToken(), req.Params.Name
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		start := time.Now()
		tick := time.NewTicker(progressEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case now := <-tick.C:
				ran := now.Sub(start)
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token,
					Progress:      float64(ran.Milliseconds()) / 1000,
					Message:       fmt.Sprintf("%s running for %s", name, ran.Round(time.Second)),
				})
			}
		}
	}()
	// Once stop returns no notification follows: none may come after the
	// result.
	return func() { close(done); <-finished }
}

func ptr[T any](v T) *T { return &v }

func addRunCommand(srv *mcp.Server, b *Binding) {
	register(srv, b, &mcp.Tool{
		Name:        "run_command",
		Title:       "Run a shell command",
		Description: procgroup.ForShell(present.RunCommandDoc),
		Annotations: &mcp.ToolAnnotations{Title: "Run a shell command", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, (*scrollback.Session).RunCommand, runCommandText)
}

func addReadFile(srv *mcp.Server, b *Binding) {
	register(srv, b, &mcp.Tool{
		Name:        "read_file",
		Title:       "Read a file",
		Description: present.ReadFileDoc,
		Annotations: &mcp.ToolAnnotations{Title: "Read a file", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, (*scrollback.Session).ReadFile, filePageText)
}

func addGrepToolOutput(srv *mcp.Server, b *Binding) {
	register(srv, b, &mcp.Tool{
		Name:        "grep_tool_output",
		Title:       "Search a retained copy",
		Description: present.GrepToolOutputDoc,
		Annotations: &mcp.ToolAnnotations{Title: "Search a retained copy", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, (*scrollback.Session).GrepToolOutput, grepText)
}

func addRunCode(srv *mcp.Server, b *Binding) { AddRunCode(srv, b) }

// AddRunCode adds run_code to srv, acting on b's session. Its scripts can
// call the session's tools and, besides them, extra (a proxy's upstream
// tools, say), which the tool's description then lists. Adding it again
// replaces it: call it whenever extra changes.
func AddRunCode(srv *mcp.Server, b *Binding, extra ...codemode.Tool) {
	AddRunCodeOver(srv, b, nil, extra...)
}

// AddRunCodeOver is AddRunCode with only the session tools named in own
// (all when nil) callable beside extra, and declared
// (scrollback.RunCodeOver).
func AddRunCodeOver(srv *mcp.Server, b *Binding, own []string, extra ...codemode.Tool) {
	register(srv, b, &mcp.Tool{
		Name:        "run_code",
		Title:       "Run code that calls the tools",
		Description: scrollback.CodeDescriptionOver(own, extra...),
		Annotations: &mcp.ToolAnnotations{Title: "Run code that calls the tools", DestructiveHint: ptr(true), OpenWorldHint: ptr(true)},
	}, func(s *scrollback.Session, ctx context.Context, in scrollback.RunCodeInput) (scrollback.RunCodeResult, error) {
		return s.RunCodeOver(ctx, in, own, extra...)
	}, runCodeText)
}

// grepText lists the matches as "LINE:OFFSET: text", context lines with
// "-", then where the search continues (present.MatchLine, GrepEnd).
func grepText(in scrollback.GrepInput, r scrollback.GrepResult) []string {
	if r.Matches == nil {
		return grepCountText(in, r)
	}
	var b strings.Builder
	for _, m := range r.Matches {
		for _, c := range m.Before {
			present.MatchLine(&b, present.MCP, present.Match{Line: c.Line, Offset: c.Offset, Text: c.Text, Context: true, Truncated: c.Truncated})
		}
		present.MatchLine(&b, present.MCP, present.Match{Line: m.Line, Offset: m.Offset, Text: m.Text, Truncated: m.Truncated})
		for _, c := range m.After {
			present.MatchLine(&b, present.MCP, present.Match{Line: c.Line, Offset: c.Offset, Text: c.Text, Context: true, Truncated: c.Truncated})
		}
	}
	if len(r.Matches) == 0 {
		b.WriteString(present.NoMatches + "\n")
	}
	return []string{b.String(), present.GrepEnd(present.MCP, len(r.Matches), in.Offset, r.NextOffset, r.TotalBytes, r.HasMore, r.Complete)}
}

// grepCountText says how many lines match, then whether that is all of
// them (present.Count).
func grepCountText(in scrollback.GrepInput, r scrollback.GrepResult) []string {
	count, end := present.Count(present.MCP, r.Count, in.Offset, r.TotalBytes, r.Complete)
	return []string{count, end}
}

// hasReturn reports whether a script has a return statement (or the word
// in a string or a comment, which does no harm: the hint is then left
// out).
func hasReturn(code string) bool {
	word := func(b byte) bool {
		return b == '_' || b == '$' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
	}
	for i := 0; ; {
		j := strings.Index(code[i:], "return")
		if j < 0 {
			return false
		}
		j += i
		end := j + len("return")
		if (j == 0 || !word(code[j-1])) && (end == len(code) || !word(code[end])) {
			return true
		}
		i = end
	}
}

// runCodeText is the return value's preview, then the script's error, its
// logs and the copies made during the run, each labelled. A script that
// stopped with an error has no value: its error comes first, rather than
// a line saying that it returned nothing.
func runCodeText(in scrollback.RunCodeInput, r scrollback.RunCodeResult) []string {
	var out []string
	switch {
	case r.Preview != "" || r.Truncated:
		out = append(out, r.Preview)
	case r.Returned:
		out = append(out, "(the script returned an empty string)")
	case r.Error == nil && !hasReturn(in.Code):
		// The last expression is not the value, as it would be in a REPL.
		out = append(out, present.NoValue+": the script has no return statement; end it with return VALUE to see a value")
	case r.Error == nil:
		out = append(out, present.NoValue)
	}
	if r.Error != nil {
		e, _ := json.Marshal(r.Error)
		out = append(out, present.ScriptError(string(e)))
	}
	if r.Logs != "" {
		out = append(out, present.Console(r.Logs))
	}
	if t := present.Retained(present.MCP, r.Retained); t != "" {
		out = append(out, t)
	}
	return out
}

// runCommandText is the preview, footer included, then how the command
// ended when that was not a zero exit and the preview's footer does not
// already say so, and, for an output shown whole, that it is incomplete.
func runCommandText(in scrollback.RunCommandInput, r scrollback.RunCommandResult) []string {
	out := []string{r.Preview}
	if r.Preview == "" {
		out[0] = present.NoOutput
	}
	if r.Truncated {
		return out
	}
	if end := present.CommandEnd(r.TimedOut, r.DurationMS, r.Signal, r.ExitCode); end != "" {
		out = append(out, end)
	}
	if !r.Complete {
		out = append(out, "[scrollback: "+present.OutputHeldOpen+"]")
	}
	if r.Recovery == scrollback.RecoveryUnavailable {
		out = append(out, present.Unsaved(r.RecoveryError))
	}
	return out
}

// pageText is the page's text exactly, then where the copy continues.
func pageText(in scrollback.ReadInput, p scrollback.Page) []string {
	return []string{p.Text, present.PageEnd(present.MCP, in.ID, in.Offset, p.NextOffset, p.TotalBytes, p.HasMore, p.Complete)}
}

// filePageText is the file's lines exactly, then where the file continues.
func filePageText(in scrollback.ReadFileInput, p scrollback.FilePage) []string {
	return []string{p.Text, present.FileEnd(present.MCP, in.Path, p.StartLine, p.EndLine, p.TotalBytes, p.NextByteOffset, p.HasMore, p.MidLine())}
}
