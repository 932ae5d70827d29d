package proxy

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback/codemode"
	"github.com/scrollback-dev/scrollback/mcpserver"
)

// addOwnTools registers read_tool_output, grep_tool_output and
// query_tool_output, as the scrollback server offers them, over the
// server's session.
func (s *server) addOwnTools() {
	mcpserver.AddTools(s.srv, s.b, "read_tool_output", "grep_tool_output", "query_tool_output") // session tools: cannot fail
}

// codeTools are the upstream tools as Code Mode tools: a script calls
// tools.NAME(args) and gets the JSON of the result's structuredContent
// when it has one, else its text as a string. An error result is thrown
// in the script with its text. run_code's declaration gives their types
// without their descriptions: each is listed beside run_code with its
// own, and a copy in the declaration would be sent with every request.
func (s *server) codeTools(tools []*mcp.Tool) []codemode.Tool {
	p := s.p
	var out []codemode.Tool
	for _, t := range tools {
		if t == nil || ownTools[t.Name] || t.Name == "run_command" || t.Name == "read_file" {
			continue
		}
		schema, _ := json.Marshal(t.InputSchema)
		var outSchema json.RawMessage // the description's result type: what a call returns, the structured content
		if t.OutputSchema != nil {
			outSchema, _ = json.Marshal(t.OutputSchema)
		}
		name := t.Name
		out = append(out, codemode.Tool{
			Name:         name,
			InputSchema:  schema,
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

// addRunCode (re)registers run_code over the session's tools and tools;
// called with s.mu held whenever the upstream's tools change.
func (s *server) addRunCode(tools []*mcp.Tool) {
	mcpserver.AddRunCode(s.srv, s.b, s.codeTools(tools)...)
}
