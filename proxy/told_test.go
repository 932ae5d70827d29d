package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback/present"
)

// TestToldBudget: what the proxy adds to what the model is told — its own
// tools (read_tool_output, grep_tool_output, query_tool_output and
// run_code, whose declaration also lists the upstream's one tool) with
// their names, descriptions and input schemas, its instructions and the
// note on previews it adds to the upstream tool's description — takes at
// most present.ToldBudget, measured as a client receives it.
func TestToldBudget(t *testing.T) {
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "v1"}, nil)
	type in struct {
		Query string `json:"query" jsonschema:"what to search for"`
	}
	mcp.AddTool(up, &mcp.Tool{Name: "search", Description: "Search the catalogue."}, func(context.Context, *mcp.CallToolRequest, in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	_, _, cs := start(t, Upstream{Dial: dialServer(up)}, Options{}, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	total := len(marshal(t, cs.InitializeResult().Instructions))
	own := map[string]int{}
	for _, tool := range res.Tools {
		if tool.Name == "search" {
			note := len(marshal(t, tool.Description)) - len(marshal(t, "Search the catalogue."))
			own["note on search"] = note
			total += note
			continue
		}
		if !ownTools[tool.Name] {
			continue
		}
		n := len(marshal(t, map[string]any{"name": tool.Name, "description": tool.Description, "inputSchema": tool.InputSchema}))
		own[tool.Name] = n
		total += n
	}
	t.Logf("the proxy adds %d bytes: instructions and %v", total, own)
	if len(own) != len(ownTools)+1 {
		t.Errorf("found %d of the proxy's %d own tools: %v", len(own), len(ownTools), own)
	}
	if total > present.ToldBudget {
		t.Errorf("what the proxy adds to what the model is told takes %d bytes, over the %d-byte budget", total, present.ToldBudget)
	}
}

// marshal encodes v as the SDK sends it: compact JSON.
func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}
