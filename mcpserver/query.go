package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
	"github.com/scrollback-dev/scrollback/present"
)

func addQueryToolOutput(srv *mcp.Server, b *Binding) {
	register(srv, b, &mcp.Tool{
		Name:        "query_tool_output",
		Title:       "Query a retained JSON copy with jq",
		Description: present.QueryToolOutputDoc,
		Annotations: &mcp.ToolAnnotations{Title: "Query a retained JSON copy with jq", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, (*scrollback.Session).QueryToolOutput, queryText)
}

// queryText is the page of results exactly, then where they continue.
func queryText(in scrollback.QueryInput, r scrollback.QueryResult) []string {
	text := r.Text
	if r.TotalBytes == 0 {
		text = present.NoResults
	}
	return []string{text, present.QueryEnd(present.MCP, in.ID, in.Filter, in.Offset, r.NextOffset, r.TotalBytes, r.HasMore, r.Complete, r.Note)}
}
