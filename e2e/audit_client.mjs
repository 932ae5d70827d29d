// audit_client.mjs drives scrollback's MCP server with the official
// TypeScript SDK client through what an MCP client meets besides paging:
// a long command under a request timeout shorter than it, kept alive by
// progress notifications (resetTimeoutOnProgress); a cancelled command
// whose copy resources/list then shows; the session's copies in
// resources/list; and a null argument's error message.
//
// Usage (audit_test.go runs it):
//
//	node audit_client.mjs stdio -- SERVER_BINARY ARGS...
//	node audit_client.mjs http  -- URL
//
// It prints "ok" on success; any failed check exits non-zero with the
// reason on stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, sep, ...target] = process.argv.slice(2);
if (!["stdio", "http"].includes(mode) || sep !== "--" || target.length === 0) {
  console.error("usage: node audit_client.mjs stdio|http -- TARGET...");
  process.exit(2);
}

function check(ok, msg) {
  if (!ok) {
    console.error("audit_client.mjs: " + msg);
    process.exit(1);
  }
}

const transport = mode === "stdio"
  ? new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(target[0]));
const client = new Client({ name: "scrollback-e2e-audit", version: "1.0.0" });
await client.connect(transport);

// The capability claims no list-changed notifications, which are never sent.
const caps = client.getServerCapabilities();
check(caps.resources && !caps.resources.listChanged, "resources capability: " + JSON.stringify(caps.resources));

// A command longer than the request timeout: progress keeps the call alive.
const progress = [];
const long = await client.callTool(
  { name: "run_command", arguments: { command: "sleep 11; echo finished" } },
  CallToolResultSchema,
  { timeout: 7000, resetTimeoutOnProgress: true, onprogress: (p) => progress.push(p) },
);
check(!long.isError && long.content[0].text === "finished\n", "long command: " + JSON.stringify(long.content));
check(progress.length >= 1 && /run_command running for/.test(progress[0].message), "progress: " + JSON.stringify(progress));

// A cancelled command: no result, but its copy is listed.
const ac = new AbortController();
const cancelled = client.callTool(
  { name: "run_command", arguments: { command: "seq 1 50000; echo cancelled-marker; sleep 300" } },
  CallToolResultSchema,
  { signal: ac.signal },
);
await new Promise((r) => setTimeout(r, 1500));
ac.abort("the user cancelled");
let rejected = false;
try { await cancelled; } catch { rejected = true; }
check(rejected, "the cancelled call resolved");

const big = await client.callTool({ name: "run_command", arguments: { command: "seq 1 40000" } });
const id = big.structuredContent.output_id;
check(typeof id === "string", "no output_id: " + JSON.stringify(big.structuredContent));

// resources/list shows the session's copies, the cancelled command's too
// (its copy is written when the killed command's output ends).
let listed = [];
for (let i = 0; i < 50; i++) {
  listed = (await client.listResources()).resources;
  if (listed.some((r) => /cancelled-marker/.test(r.title ?? ""))) break;
  await new Promise((r) => setTimeout(r, 100));
}
const mine = listed.find((r) => r.uri === "scrollback://output/" + id);
check(mine && mine.size === big.structuredContent.totalBytes && mine.mimeType === "text/plain", "resources/list lacks the copy: " + JSON.stringify(listed));
const killed = listed.find((r) => /cancelled-marker/.test(r.title ?? ""));
check(killed, "resources/list lacks the cancelled command's copy: " + JSON.stringify(listed.map((r) => r.title)));
const text = (await client.readResource({ uri: killed.uri })).contents[0].text;
check(text.includes("cancelled-marker\n"), "the cancelled command's copy lacks its output");

// A null argument: a tool error that says null.
const nul = await client.callTool({ name: "read_tool_output", arguments: { id, offset: null } });
check(nul.isError && /null given/.test(nul.content[0].text) && !/reflect/.test(nul.content[0].text), "null argument: " + nul.content[0].text);

await client.close();
console.log("ok");
