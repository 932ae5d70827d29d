// Package proxy puts scrollback in front of any MCP server: it connects to
// an upstream server with the official Go SDK client (a command spoken to
// over stdio, or a streamable HTTP URL) and serves its tools, prompts and
// resources again, to one client over stdio or to many over HTTP.
//
// Upstream tools keep their names, input schemas, annotations and
// descriptions (a note on previews is appended); their output schemas are
// dropped, since a previewed result cannot conform to one. Arguments pass
// through untouched. A result is handled as the product contract says:
//
//   - Its text is its text blocks joined by "\n", or its structuredContent
//     as JSON when it has no text block. When that text, or its
//     structuredContent's JSON, is larger than the history budget (32 KiB,
//     Options.Budget, per tool Options.ToolBudgets), the client gets a
//     head-and-tail preview with the contract's footer in place of the text
//     blocks, and the session keeps a retained copy of the text (capped at
//     the copy cap, 8 MiB, with complete=false beyond). The recovery
//     reference stands in the footer and in _meta: scrollback/output_id,
//     scrollback/totalBytes, scrollback/complete, scrollback/session. The
//     structuredContent of such a result is not passed on; the copy holds
//     the text followed by its JSON when only one of the two is too large,
//     else the text alone (servers put the structured content's JSON in a
//     text block, as the MCP specification asks).
//   - Images, audio, resource links and embedded resources pass through
//     unchanged, in order, but for an embedded resource's text over the
//     budget, previewed in place and retained on its own; so do isError
//     and the upstream's own _meta.
//   - A result within the budget passes through untouched: the same
//     content blocks, structuredContent, isError and _meta.
//
// The proxy adds read_tool_output, grep_tool_output and query_tool_output
// (jq over a copy that holds JSON) over the session's
// copies, and run_code, whose scripts can call exactly the tools the
// proxy lists (the upstream's and those three, not the host's run_command
// or read_file) as tools.NAME(args): the script gets the JSON of the result's
// structuredContent when it has one, else its text as a string (with
// blocks other than text, {content: [...]} as MCP gives them), and a
// result larger than the preview budget is retained before the script sees
// it (the bridge rule of Code Mode).
//
// Faults become tool errors (*Error), and the proxy stays up: an upstream
// that breaks during a call is reconnected (a command is started again) on
// the next call; a request that takes longer than Options.CallTimeout is
// cancelled, whichever it is. An upstream's own JSON-RPC error stays a
// protocol error, its code and data kept.
//
// Over HTTP each client session gets an upstream connection of its own
// (a process, for a command), opened on its first request that goes
// upstream, declaring that client's capabilities, and closed with the
// session, at most Options.MaxUpstreams at once: what the upstream asks or
// tells during a client's call reaches that client only. A message larger than the copy cap is
// cut in transit, before the SDK decodes it (see cutReader), so memory
// stays bounded whatever the upstream sends; the result's copy is then
// marked incomplete.
//
// The proxy's resources/list names the session's retained copies after
// the upstream's resources, as scrollback mcp lists them; the list and
// the copies' text are cacheScope private. Tasks (tasks/*) are not
// proxied: the SDK has none, so the tasks capability is not declared and
// tools lose their execution.taskSupport.
//
// List-changed notifications of the upstream are followed: the proxy
// re-lists and updates what it offers, and the SDK tells the clients.
package proxy
