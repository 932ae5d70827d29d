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
const Instructions = `A preview is not the whole result: read, grep or query its copy (output_id) instead of re-running the source. hasMore=false: the copy ends; complete=false: it lacks part of the output. Before saying a line, field or record is absent, read or search the copy and check the source's own pagination (page tokens, head or grep in a pipeline, server-side filters); without the evidence, say it is uncertain, not absent.`

// ProxyInstructions is what the proxy's instructions add to Instructions,
// before the upstream server's own.
const ProxyInstructions = "This server is a scrollback proxy: its other tools are the upstream server's, and their results over the budget are previewed and kept the same way."

// ProxyUpstream names the upstream server in the proxy's instructions.
func ProxyUpstream(name string) string { return "The upstream server is " + name + "." }

// ProxyUpstreamInstructions heads the upstream server's own instructions.
const ProxyUpstreamInstructions = "The upstream server's instructions:"

// ProxyNote is appended to every upstream tool's description behind the
// proxy: budget is the tool's history budget in bytes.
func ProxyNote(budget int) string {
	size := strconv.Itoa(budget) + " bytes"
	if budget%1024 == 0 {
		size = strconv.Itoa(budget/1024) + " KiB"
	}
	return "[scrollback] A result over " + size + " shows a preview and is kept as a copy (output_id): read, grep or query it instead of calling again."
}

// The tools' descriptions.
const (
	RunCommandDoc = `Run a command with /bin/sh -c, stdout and stderr merged. Output over 24 KiB shows a head, a tail and a footer, and is kept as a copy (output_id) for read_tool_output, grep or query, not re-run: the preview is not the whole result. A non-zero exit, signal or timeout is a result. complete=false: say uncertain, not absent.`

	ReadToolOutputDoc = `Read a copy from a UTF-8 byte offset (0, a footer's, then nextOffset), limit bytes (at most 4096) a call; hasMore=false: the end. complete=false: say uncertain, not absent.`

	ReadFileDoc = `Read a text file from a 1-based line or a byte_offset (which wins): up to limit lines (default 2000), 24 KiB a page. hasMore=false: the end; until then nothing is proven absent. Refuses keys, credentials, .env files and binaries.`

	GrepToolOutputDoc = `Search every line of a copy, however long, for an RE2 pattern: max (default 50) matches a call, each with its line, offset (where its text starts) and text (a 1 KiB window of a longer line); count=true: only the count. No match in a copy with complete=false proves nothing: say uncertain.`

	QueryToolOutputDoc = `Run a jq filter (gojq) on a copy of JSON or JSON Lines, e.g. .items[] | select(.state == "failed") | .id. Results: compact JSON, one a line, limit bytes (at most 4096) a call from offset. Keys come sorted (no keys_unsorted); input, inputs, env and $ENV are refused; stops at a time limit (5 s) or output limit (8 MiB). complete=false: say uncertain, not absent.`

	// RunCodeDoc opens run_code's description; the TypeScript
	// declaration of the tools a script can call follows it, which shows
	// how to call them: an example call cost 62 bytes a request.
	RunCodeDoc = runCodeLead + runCodeRest

	runCodeLead = `Run TypeScript or JavaScript: the body of an async function that calls tools.NAME(input) and returns a value`
	runCodeRest = `. ` + CodeInputsListed + `; console.log goes to logs; no file, network or process access. A nested result over 24 KiB is kept first; retained lists each copy ("output": a tool's whole output, "result": what the script got): search them before saying something is absent.`
)

// CodeInputsListed is what run_code's description says of the inputs of
// the tools its declaration lists with input: any.
const CodeInputsListed = "Inputs are as the tool list gives"
