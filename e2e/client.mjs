// client.mjs drives scrollback's MCP server with the official TypeScript
// SDK client, as an agent would: list the tools and check their schemas,
// run one command whose output is too large to show, then page through the
// retained copy with read_tool_output until the marker line is found and
// the copy ends; then query a large JSON result with query_tool_output.
//
// Usage (the Go tests in this folder run it):
//
//	node client.mjs stdio OUT_FILE COMMAND MARKER -- SERVER_BINARY ARGS...
//	node client.mjs http  OUT_FILE COMMAND MARKER -- URL [HEADER=VALUE...]
//
// It writes the concatenated pages to OUT_FILE and prints a JSON summary on
// stdout. Any failed check exits non-zero with the reason on stderr.
import { writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, outFile, command, marker, sep, ...target] = process.argv.slice(2);
if (!["stdio", "http"].includes(mode) || sep !== "--" || target.length === 0) {
  console.error("usage: node client.mjs stdio|http OUT_FILE COMMAND MARKER -- TARGET...");
  process.exit(2);
}

function check(ok, msg) {
  if (!ok) {
    console.error("client.mjs: " + msg);
    process.exit(1);
  }
}

let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" });
} else {
  const headers = {};
  for (const kv of target.slice(1)) {
    const i = kv.indexOf("=");
    headers[kv.slice(0, i)] = kv.slice(i + 1);
  }
  transport = new StreamableHTTPClientTransport(new URL(target[0]), { requestInit: { headers } });
}

const client = new Client({ name: "scrollback-e2e", version: "1.0.0" });
await client.connect(transport);

// The server's instructions carry the rule of the contract's section 4.
const instructions = client.getInstructions() ?? "";
check(/uncertain/.test(instructions) && /read the retained copy/.test(instructions), "instructions lack the evidence rule: " + instructions);

// Tools and their schemas.
const { tools } = await client.listTools();
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
const want = {
  run_command: { required: ["command"], out: ["preview", "truncated", "output_id", "exit_code", "totalBytes", "complete", "recovery"] },
  read_tool_output: { required: ["id"], out: ["text", "nextOffset", "totalBytes", "hasMore", "complete"] },
  read_file: { required: ["path"], out: ["text", "startLine", "endLine", "nextLine", "nextByteOffset", "totalBytes", "hasMore"] },
  query_tool_output: { required: ["id", "filter"], out: ["text", "nextOffset", "totalBytes", "hasMore", "complete"] },
};
for (const [name, w] of Object.entries(want)) {
  const t = byName[name];
  check(t, `tool ${name} missing from ${Object.keys(byName)}`);
  check(t.inputSchema?.type === "object", `${name}: input schema is not an object`);
  check(JSON.stringify(t.inputSchema.required ?? []) === JSON.stringify(w.required), `${name}: required ${JSON.stringify(t.inputSchema.required)}`);
  check(t.outputSchema?.type === "object", `${name}: no output schema`);
  for (const p of w.out) check(p in (t.outputSchema.properties ?? {}), `${name}: output schema lacks ${p}`);
  check(t.description && t.description.length > 100, `${name}: no real description`);
}

// One command, run once; its output does not fit the preview.
const run = await client.callTool({ name: "run_command", arguments: { command } });
check(!run.isError, "run_command failed: " + JSON.stringify(run.content));
const rc = run.structuredContent;
const session = run._meta?.["scrollback/session"];
check(typeof session === "string" && session.length > 0, "no scrollback/session in _meta");
check(rc.truncated === true && typeof rc.output_id === "string" && rc.recovery === "available", "not retained: " + JSON.stringify({ ...rc, preview: undefined }));
check(run.content[0].type === "text" && run.content[0].text === rc.preview, "the first text block is not the preview");
check(rc.preview.includes(rc.output_id) && rc.preview.includes("read_tool_output"), "the preview's footer does not name the continuing call");
check(!rc.preview.includes(marker), "the marker is in the preview: the test would prove nothing");

// Page through the copy from offset 0, following nextOffset.
const pages = [];
let offset = 0;
let markerPage = -1;
let last;
for (let n = 0; ; n++) {
  check(n < 10000, "too many pages");
  const res = await client.callTool({ name: "read_tool_output", arguments: { id: rc.output_id, offset } });
  check(!res.isError, `read_tool_output at ${offset}: ` + JSON.stringify(res.content));
  const p = res.structuredContent;
  check(res.content[0].text === p.text, "the first text block is not the page text");
  check(res._meta?.["scrollback/session"] === session, "the page came from another session");
  check(Buffer.byteLength(p.text) <= 4096 && p.nextOffset - offset <= 4096, `page at ${offset} is too long`);
  // The marker may straddle two pages: look in this page joined to the last.
  if (markerPage < 0 && ((pages.at(-1) ?? "") + p.text).includes(marker)) markerPage = n;
  pages.push(p.text);
  last = p;
  if (!p.hasMore) break;
  check(p.nextOffset > offset, `no progress at ${offset}`);
  offset = p.nextOffset;
}
check(markerPage >= 0, "the marker was not found paging through the copy");
check(last.nextOffset === rc.totalBytes && last.complete === true, "the last page: " + JSON.stringify({ ...last, text: undefined }));

// A bad offset is a tool error the model can read, not a protocol error.
const bad = await client.callTool({ name: "read_tool_output", arguments: { id: rc.output_id, offset: rc.totalBytes + 10 } });
check(bad.isError === true && /past the end/.test(bad.content[0].text), "bad offset: " + JSON.stringify(bad));
check(bad._meta?.["scrollback/error_kind"] === "offset" && bad._meta?.["scrollback/session"] === session, "bad offset _meta: " + JSON.stringify(bad._meta));

// Every tool error has its kind in _meta; an unknown tool is one too.
const missing = await client.callTool({ name: "read_tool_output", arguments: { id: "out_aaaaaaaaaaaaaaaaaaaaaaaaaa" } });
check(missing.isError === true && missing._meta?.["scrollback/error_kind"] === "not_found", "unknown id: " + JSON.stringify(missing));
const unknown = await client.callTool({ name: "no_such_tool", arguments: {} });
check(unknown.isError === true && unknown._meta?.["scrollback/error_kind"] === "argument" && /read_tool_output/.test(unknown.content[0].text), "unknown tool: " + JSON.stringify(unknown));

// A JSON result: its preview outlines the document and names
// query_tool_output, which answers with a jq filter over the copy.
const jsonCmd = `printf '{"items":['; i=1; while [ $i -le 4000 ]; do [ $i -gt 1 ] && printf ','; printf '{"id":%d,"ok":%s}' $i $([ $((i % 1000)) -eq 0 ] && echo false || echo true); i=$((i+1)); done; printf '],"summary":{"failed":4}}'`;
const jr = (await client.callTool({ name: "run_command", arguments: { command: jsonCmd } })).structuredContent;
check(jr.truncated && jr.output_id, "the JSON command's output was not retained");
check(jr.preview.includes(`query_tool_output {"id":"${jr.output_id}"`) && /  \.summary: object of 1 key, at \d+/.test(jr.preview), "the JSON preview has no outline");
const q = await client.callTool({ name: "query_tool_output", arguments: { id: jr.output_id, filter: ".items[] | select(.ok | not) | .id" } });
check(!q.isError && q.structuredContent.text === "1000\n2000\n3000\n4000\n" && q.structuredContent.complete === true, "query_tool_output: " + JSON.stringify(q.content));
check(q.content[0].text === q.structuredContent.text && q._meta?.["scrollback/session"] === session, "query_tool_output: text block or session");
const qbad = await client.callTool({ name: "query_tool_output", arguments: { id: jr.output_id, filter: ".items[" } });
check(qbad.isError === true && /not valid jq/.test(qbad.content[0].text), "bad filter: " + JSON.stringify(qbad));

// grep_tool_output finds the marker at an offset that reads it, counts it,
// and in the JSON result (one line of about 80 KB) shows a window of at
// most 1 KiB around a match whose offset reads the match.
const g = (await client.callTool({ name: "grep_tool_output", arguments: { id: rc.output_id, pattern: marker } })).structuredContent;
check(g.matches?.length === 1 && g.hasMore === false && g.matches[0].text.includes(marker), "grep for the marker: " + JSON.stringify(g));
const gc = (await client.callTool({ name: "grep_tool_output", arguments: { id: rc.output_id, pattern: marker, count: true } })).structuredContent;
check(gc.count === 1 && !("matches" in gc) && gc.complete === true, "grep count: " + JSON.stringify(gc));
const gj = (await client.callTool({ name: "grep_tool_output", arguments: { id: jr.output_id, pattern: '"id":3999,' } })).structuredContent;
const m = gj.matches?.[0];
check(gj.matches?.length === 1 && m.truncated === true && Buffer.byteLength(m.text) <= 1024 && m.text.includes('"id":3999,'), "grep in a long line: " + JSON.stringify(gj));
const at = (await client.callTool({ name: "read_tool_output", arguments: { id: jr.output_id, offset: m.offset, limit: 1024 } })).structuredContent;
check(at.text.includes('"id":3999,'), "read_tool_output at the match's offset does not show it");

writeFileSync(outFile, pages.join(""));
console.log(JSON.stringify({ session, output_id: rc.output_id, totalBytes: rc.totalBytes, pages: pages.length, markerPage }));
await client.close();
