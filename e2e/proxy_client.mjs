// proxy_client.mjs drives `scrollback proxy` with the official TypeScript
// SDK client: read a large file through a proxied upstream tool, take the
// recovery reference from the result's _meta and footer, and page through
// the retained copy with read_tool_output, as an agent would.
//
// Usage (the Go tests in this folder run it):
//
//	node proxy_client.mjs OUT_FILE BIG_PATH SMALL_PATH -- SCROLLBACK_BINARY proxy ARGS...
//
// It writes the concatenated pages to OUT_FILE and prints a JSON summary
// ({tool, outputId, previewBytes, pages, small}) on stdout; any failed check
// exits non-zero with the reason on stderr.
import { writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [outFile, bigPath, smallPath, sep, ...target] = process.argv.slice(2);
if (sep !== "--" || target.length === 0) {
  console.error("usage: node proxy_client.mjs OUT_FILE BIG_PATH SMALL_PATH -- COMMAND ARGS...");
  process.exit(2);
}
function check(ok, msg) {
  if (!ok) {
    console.error("proxy_client.mjs: " + msg);
    process.exit(1);
  }
}

const client = new Client({ name: "scrollback-proxy-e2e", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" }));

const { tools } = await client.listTools();
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
const tool = byName.read_text_file ? "read_text_file" : "read_file";
check(byName[tool], "the upstream's read tool is not re-exported: " + Object.keys(byName));
check(byName.read_tool_output && byName.run_code, "the proxy lacks read_tool_output or run_code");
check(!byName[tool].outputSchema, tool + " keeps an outputSchema through the proxy");
check(/preview/i.test(byName[tool].description), tool + "'s description has no note on previews");

// A small file passes through whole, with no recovery reference.
const small = await client.callTool({ name: tool, arguments: { path: smallPath } });
check(!small.isError && !small._meta?.["scrollback/output_id"], "the small file got a recovery reference");
const smallText = small.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");

// The big file: a preview within the history budget, the id in _meta and in the footer text.
const big = await client.callTool({ name: tool, arguments: { path: bigPath } });
check(!big.isError, "reading the big file failed: " + JSON.stringify(big.content).slice(0, 300));
const preview = big.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
const id = big._meta?.["scrollback/output_id"];
check(typeof id === "string" && id.length > 0, "no scrollback/output_id in _meta: " + JSON.stringify(big._meta));
check(Buffer.byteLength(preview) <= 8192, "a retained result shows " + Buffer.byteLength(preview) + " bytes, over 8 KiB");
check(preview.includes(id) && preview.includes("read_tool_output"), "the footer does not name the reader and the id");

let offset = 0;
let pages = 0;
const parts = [];
for (;;) {
  const r = await client.callTool({ name: "read_tool_output", arguments: { id, offset } });
  check(!r.isError, "read_tool_output at " + offset + ": " + JSON.stringify(r.content));
  const p = r.structuredContent;
  check(p && typeof p.text === "string" && p.nextOffset > offset || !p.hasMore, "bad page at " + offset);
  parts.push(p.text);
  pages++;
  if (!p.hasMore) {
    check(p.complete === true, "the copy of the file says it is incomplete");
    break;
  }
  offset = p.nextOffset;
}
// The proxy's errors are finished as scrollback mcp's: a kind in _meta, an
// unknown tool a tool error naming the tools there are.
const missing = await client.callTool({ name: "read_tool_output", arguments: { id: "out_aaaaaaaaaaaaaaaaaaaaaaaaaa" } });
check(missing.isError === true && missing._meta?.["scrollback/error_kind"] === "not_found" && typeof missing._meta?.["scrollback/session"] === "string", "unknown id: " + JSON.stringify(missing));
const unknown = await client.callTool({ name: "no_such_tool", arguments: {} });
check(unknown.isError === true && unknown._meta?.["scrollback/error_kind"] === "argument" && unknown.content[0].text.includes(tool), "unknown tool: " + JSON.stringify(unknown));

writeFileSync(outFile, parts.join(""));
await client.close();
console.log(JSON.stringify({ tool, outputId: id, previewBytes: Buffer.byteLength(preview), pages, small: smallText }));
