package present

import "strconv"

// What the model is told before it calls anything: the server's
// instructions and each tool's description. Together with the tools' names
// and input schemas they stay within ToldBudget (the contract's "what the
// model is told"), which a test of the MCP server measures as a client
// receives them. They say the rules once, in few words: a preview is not
// the whole result; read or search the copy and check the source's own
// pagination before saying something is absent; say uncertain when the
// evidence cannot be had.

// ToldBudget is the most bytes of tool names, descriptions, input schemas
// and instructions `scrollback mcp` sends: 8 KiB.
const ToldBudget = 8192

// Instructions is the MCP server's instructions.
const Instructions = `scrollback keeps output too large to show at once: a result over its budget shows a head, a tail and a footer; the rest is kept as a copy (output_id) to read (read_tool_output), search (grep_tool_output) or query as JSON (query_tool_output), never re-run. hasMore=false: the end of the copy. complete=false: the copy lacks part of what the tool produced.

A preview is not the whole result: before saying a line, field or record is absent, read or search the copy and check the source's own pagination (page tokens, head or grep in a pipeline, server-side filters). If you cannot get the evidence, say it is uncertain, not absent.`

// ProxyInstructions is what the proxy's instructions add to Instructions,
// before the upstream server's own.
const ProxyInstructions = "This server is a scrollback proxy: the other tools belong to the upstream server behind it, and a result of theirs over its budget is previewed the same way (its _meta carries scrollback/output_id)."

// ProxyUpstream names the upstream server in the proxy's instructions.
func ProxyUpstream(name string) string { return "The upstream server is " + name + "." }

// ProxyUpstreamInstructions heads the upstream server's own instructions.
const ProxyUpstreamInstructions = "The upstream server's instructions:"

// ProxyNote is appended to every upstream tool's description behind the
// proxy: budget is the tool's history budget in bytes.
func ProxyNote(budget int) string {
	return "[scrollback] A result over " + strconv.Itoa(budget) + " bytes is previewed (head, tail, footer); the rest is kept as a copy (output_id): read, grep or query it instead of calling again."
}

// The tools' descriptions.
const (
	RunCommandDoc = `Run a shell command with /bin/sh -c; stdout and stderr merged. Output up to 24 KiB is shown whole; larger output shows a head, a tail and a footer (what is left out, error-like lines, a JSON outline, the read_tool_output call that continues) and is kept as a copy (output_id) to read, grep or query, not re-run. A preview is not the whole result; complete=false: the copy lacks part of the output: say uncertain, not absent. A failing exit, a signal or a timeout is a result, not an error.`

	ReadToolOutputDoc = `Read a retained copy by UTF-8 byte offset, at most 4096 bytes a call: start at 0 or a footer's offset, follow nextOffset. hasMore=false: end of the copy. complete=false: the copy lacks part of the output, so what you do not find may exist: say uncertain. Ids are valid only in this session.`

	ReadFileDoc = `Read a text file, up to limit lines and 24 KiB a page, from a 1-based line or a byte_offset (which wins). hasMore=true: go on at byte_offset=nextByteOffset; nothing is absent from a file not read to the end (hasMore=false). Private keys, credential and .env files, binaries and paths outside the root are refused.`

	GrepToolOutputDoc = `Search a retained copy for lines matching an RE2 pattern, every byte of every line. A match gives its line number, the offset where its text starts (for read_tool_output) and the text (a 1 KiB window of a longer line), with context lines if asked. count=true returns only how many lines match. hasMore=true: search on from offset=nextOffset. Nothing found in a copy with complete=false proves nothing: say uncertain.`

	QueryToolOutputDoc = `Run a jq filter over a retained copy holding JSON (a document, or JSON Lines: each line's) instead of paging, e.g. .items[] | select(.state == "failed") | .id. Results: compact JSON, one a line, 4096 bytes a call; hasMore=true: call again with offset=nextOffset. It is gojq: no keys_unsorted (keys come sorted), input_line_number or $__loc__; input, inputs, env and $ENV are refused; a time limit (5 s) and an output limit (8 MiB) stop it. complete=false: say uncertain, not absent.`

	// RunCodeDoc opens run_code's description; the TypeScript
	// declaration of the tools a script can call follows it.
	RunCodeDoc = `Run TypeScript or JavaScript calling the tools below: an async function body returning a value, e.g. const r = await tools.run_command({command: "ls"}); return r.preview. console.log goes to logs; no file, network or process access. A nested result over 24 KiB is saved first; retained lists each copy (holds "output": a tool's whole output, "result": what the script got): read or grep them (read_tool_output, grep_tool_output) before saying something is absent.`
)
