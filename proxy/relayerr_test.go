package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRelayErrorCode: when the proxy cannot relay the upstream's request
// to the client (here the client's answer to an elicitation does not
// match the requested schema, which the SDK checks), the upstream gets a
// JSON-RPC error with a code JSON-RPC defines, not 0 ("MCP error 0: ..."
// in the TypeScript SDK). The client, on the wire, does not check its
// answer, as a client need not.
func TestRelayErrorCode(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "v1"}, &mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	mcp.AddTool(up, &mcp.Tool{Name: "ask"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "age?", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"age": map[string]any{"type": "integer"}}, "required": []any{"age"},
		}})
		var we *jsonrpc.Error
		if !errors.As(err, &we) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("no JSON-RPC error: %v", err)}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(we.Code)}}}, nil, nil
	})
	send, r := wireClient(t, Upstream{Dial: dialServer(up)})
	// until answers elicitations with content that does not match their
	// schema and returns the result of request id.
	until := func(id int) json.RawMessage {
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
			}
			json.Unmarshal(line, &m)
			switch {
			case m.Method == "elicitation/create":
				send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"name":"A"}}}`, m.ID))
			case m.Method == "" && string(m.ID) == fmt.Sprint(id):
				return m.Result
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"wire","version":"0"}}}`)
	until(0)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	var res mcp.CallToolResult
	if err := json.Unmarshal(until(1), &res); err != nil {
		t.Fatal(err)
	}
	if got := text(&res); got != fmt.Sprint(jsonrpc.CodeInvalidParams) && got != fmt.Sprint(jsonrpc.CodeInternalError) {
		t.Errorf("the upstream's elicitation failed with %q, want the code %d or %d", got, jsonrpc.CodeInvalidParams, jsonrpc.CodeInternalError)
	}
}
