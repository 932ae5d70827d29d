// Package mcpserver serves scrollback's tools over the Model Context
// Protocol, with the official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// It is a thin front end: every tool is one method of a scrollback.Session,
// its input and output schemas inferred from the engine's own input and
// result types. Tools are registered with the SDK's typed handlers, except
// read_tool_output, the call a model repeats most: its handler decodes its
// three arguments itself and skips the SDK's second decoding and its
// validation of the result against the output schema, which cost more than
// the read (see read.go). Each successful result carries:
//
//   - first, a plain text block the model reads: a command's preview with its
//     footer, a page's text, a file's lines — never the JSON of the result;
//   - after it, when there is more to read, a short bracketed line naming
//     the exact call that continues;
//   - structuredContent: the contract's object (run_command's result, a
//     page, ...), spelled with the contract's JSON names;
//   - _meta "scrollback/session": the session the call acted on.
//
// Tool failures — bad or missing arguments, an unknown output id, an offset
// inside a character, an unknown tool name — are tool results with isError
// set and a message that says what was wrong and what would be right; they
// are never protocol errors, so a model can read them and correct itself.
// Their _meta carries the session, once there is one, and
// "scrollback/error_kind": one of not_found, evicted, offset, argument,
// sensitive, unavailable (scrollback.ErrorKind).
//
// Two transports are offered:
//
//   - NewServer binds one server to one session; serve it over stdio with
//     (*mcp.Server).Run and mcp.StdioTransport (`scrollback mcp`).
//   - NewHTTPHandler serves the streamable HTTP transport at /mcp. Each MCP
//     session gets its own scrollback session (created on its first tool
//     call), or resumes one its caller owns named by the Scrollback-Session
//     header. A request of protocol 2026-07-28 (no initialize, no MCP
//     session) acts on the session its header names, else on its
//     principal's default session. With bearer tokens configured every
//     request must carry one; the owner of a session is a hash of the token
//     that created it. Listen refuses to bind a non-loopback address when
//     no token is configured.
//
// Both speak every protocol version of the SDK, 2026-07-28 included. A
// result that retained a copy carries, after its text, a resource_link to
// scrollback://output/ID; resources/read of it returns the copy's text
// (AddOutputResources).
//
// Other servers reuse the pieces: AddTools adds any of the session tools
// (AddRunCode run_code, with extra tools a script may call) to any
// *mcp.Server, acting on a Binding — a fixed session (BindSession) or one
// made on first use (NewBinding); NewSessionHandler serves any such server
// over HTTP with the same rules as NewHTTPHandler; FinishResults, installed
// on every such server, gives each result its _meta (the session, and a
// failure's kind under MetaErrorKind) and turns failures, an unknown tool
// included, into tool errors. The proxy (package proxy) is built on them.
package mcpserver
