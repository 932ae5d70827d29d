package proxy

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/mcpserver"
)

// sessionTools are the session tools the proxy offers beside the
// upstream's: its clients read the copies, and nothing else of the
// proxy's host (no run_command, no read_file).
var sessionTools = []string{"read_tool_output", "grep_tool_output", "query_tool_output"}

// addOwnTools registers sessionTools, as the scrollback server offers
// them, over the server's session.
func (s *server) addOwnTools() {
	mcpserver.AddTools(s.srv, s.b, sessionTools...) // session tools: cannot fail
}

// codeTools are the upstream tools the proxy lists (listed, as syncTools
// exports them) as Code Mode tools: a script calls tools.NAME(args) and
// gets what codeValue makes of the result. An error result is thrown in
// the script with its text. run_code's declaration gives their result
// types only: each is listed beside run_code with its own description and
// input schema, and a copy in the declaration would be sent with every
// request (scrollback.CodeDescriptionOver), so no input schema is given.
func (s *server) codeTools(tools []*mcp.Tool) []codemode.Tool {
	p := s.p
	shown, _ := listed(tools)
	out := make([]codemode.Tool, 0, len(shown))
	for _, t := range shown {
		var outSchema json.RawMessage // the description's result type: what a call returns, the structured content
		if t.OutputSchema != nil {
			outSchema, _ = json.Marshal(t.OutputSchema)
		}
		name := t.Name
		out = append(out, codemode.Tool{
			Name:         name,
			OutputSchema: outSchema,
			Call: func(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
				res, err := s.call(ctx, nil, name, args, nil)
				if err != nil {
					return nil, err
				}
				if res.IsError {
					return nil, fmt.Errorf("%s", p.resultText(res, 4096, 4096).data)
				}
				return p.codeValue(res)
			},
		})
	}
	return out
}

// addRunCode (re)registers run_code over the tools the proxy lists:
// sessionTools and the upstream's tools; called with s.mu held whenever
// the upstream's tools change.
func (s *server) addRunCode(tools []*mcp.Tool) {
	mcpserver.AddRunCodeOver(s.srv, s.b, sessionTools, s.codeTools(tools)...)
}
