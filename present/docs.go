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
const Instructions = `scrollback keeps tool output too large to show at once. A result over its budget shows a head, a tail and a footer; the rest is a retained copy in this session (output_id). Read it with read_tool_output, search it with grep_tool_output, query JSON with query_tool_output; never re-run a command to see more. hasMore=false: you reached the end of the copy. complete=false: the copy itself lacks part of what the tool produced.

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
	return "[scrollback] A result over " + strconv.Itoa(budget) + " bytes shows a head, a tail and a footer; the rest is kept as a copy (output_id): read, grep or query it instead of calling again."
}

// The tools' descriptions.
const (
	RunCommandDoc = `Run a shell command with /bin/sh -c; stdout and stderr merged in order. Output up to 24 KiB is shown whole. Larger output shows a head, a tail and a footer (what was not shown, error-like lines, a JSON outline, the read_tool_output call that continues); all of it is kept as a copy (output_id): read, grep or query it rather than running the command again. A preview is not the whole result; complete=false: the copy lacks part of the output, so absence from it proves nothing: say uncertain. A non-zero exit, a signal or a timeout is a result (exit_code, signal, timed_out), not an error.`

	ReadToolOutputDoc = `Read a retained copy by UTF-8 byte offset, at most 4096 bytes a call, without running anything again: start at 0 or a footer's offset, then follow nextOffset. hasMore=false: end of the copy. complete=false: the copy lacks part of what the tool produced, so what you do not find may still exist: say uncertain, not absent. Ids are valid only in this session.`

	ReadFileDoc = `Read a text file: up to limit lines (default 2000) and 24 KiB a page, from a 1-based line or a byte_offset (which wins). hasMore=true: continue at byte_offset=nextByteOffset; do not say something is absent from a file you have not read to the end (hasMore=false). Private keys, credential and .env files, binary files and paths outside the server's root are refused.`

	GrepToolOutputDoc = `Search a retained copy for lines matching an RE2 pattern; every byte of every line is searched. A match gives its line number, the offset where its text starts (a read_tool_output offset) and its text (a window of at most 1 KiB of a longer line), with context lines when asked. count=true returns only how many lines match. hasMore=true: search again with offset=nextOffset. Finding nothing in a copy with complete=false proves nothing: say uncertain.`

	QueryToolOutputDoc = `Run a jq filter over a retained copy holding JSON (one document, or JSON Lines: each line's document) instead of paging: .items | length, .summary, .items[] | select(.state == "failed") | .id. Results are compact JSON, one a line, 4096 bytes a call; hasMore=true: call again with offset=nextOffset. The filter language is gojq: jq's builtins (keys, to_entries, paths, getpath, limit, ...) but no keys_unsorted (object keys come sorted), input_line_number or $__loc__; input, inputs, env and $ENV are refused. It stops at a time limit (5 s) or an output limit (8 MiB of results). complete=false: a result not found may still exist: say uncertain.`

	// RunCodeDoc opens run_code's description; the TypeScript
	// declaration of the tools a script can call follows it.
	RunCodeDoc = `Run TypeScript or JavaScript that calls the tools below and returns a value (a string as itself, else JSON); the code is the body of an async function: const r = await tools.run_command({command: "ls"}); return r.preview. console.log goes to logs. No file, network or process access; timeout_ms defaults to 30000. A nested result over 24 KiB is saved as a copy before the script gets it; retained lists every copy made (holds "output": a tool's whole output; "result": the object the script got). Read or search the copies before saying something is absent.`
)
