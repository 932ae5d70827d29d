package mcpserver

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/scrollback-dev/scrollback"
)

const queryToolOutputDoc = `Run a jq filter over a retained copy that holds JSON, without running anything again: one JSON document, or JSON Lines (the filter then runs on each line's document). Use it instead of paging when the copy is JSON (a preview's footer says so and outlines the document): .items | length, .summary, .items[] | select(.status == "failed") | .id, keys.

The results come back as compact JSON, one a line, at most 4096 bytes a call: hasMore=true means more follows at nextOffset (call again with the same id and filter and that offset; the filter is not run again). totalBytes is the length of all the results. complete=false means the copy itself lacks part of what the tool produced, so a result not found may still have existed: say it is uncertain rather than absent.

The filter sees only the copy: input, inputs, env and $ENV are refused. It is stopped at a time limit (5 s), an output limit (8 MiB of results) or a memory limit, and the error says which; a copy that is not JSON is an error naming the byte offset and line where parsing stopped.`

func addQueryToolOutput(srv *mcp.Server, b *Binding) {
	register(srv, b, &mcp.Tool{
		Name:        "query_tool_output",
		Title:       "Query a retained JSON copy with jq",
		Description: queryToolOutputDoc,
		Annotations: &mcp.ToolAnnotations{Title: "Query a retained JSON copy with jq", ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, (*scrollback.Session).QueryToolOutput, queryText)
}

// queryText is the page of results exactly, then where they continue.
func queryText(in scrollback.QueryInput, r scrollback.QueryResult) []string {
	text := r.Text
	if r.TotalBytes == 0 {
		text = "(the filter produced no results)"
	}
	var where string
	switch {
	case r.HasMore:
		where = fmt.Sprintf("[scrollback: bytes %d to %d of %d bytes of results. More follows: call query_tool_output {\"id\": %s, \"filter\": %s, \"offset\": %d}]",
			in.Offset, r.NextOffset, r.TotalBytes, jsonString(in.ID), jsonString(in.Filter), r.NextOffset)
	case r.Complete:
		where = fmt.Sprintf("[scrollback: end of the results (%d bytes); the copy holds everything the tool produced]", r.TotalBytes)
	default:
		where = fmt.Sprintf("[scrollback: end of the results (%d bytes), but the copy is incomplete: part of what the tool produced was not saved, so something not found may still have existed: say so rather than calling it absent]", r.TotalBytes)
	}
	if r.Note != "" {
		where += "\n[scrollback: " + r.Note + "]"
	}
	return []string{text, where}
}
