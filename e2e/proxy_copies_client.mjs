// proxy_copies_client.mjs drives `scrollback proxy` in front of the
// everything-server with the official TypeScript SDK client and checks
// what the proxy adds as resources: a previewed result's copy is in
// resources/list (after the upstream's resources), its text reads back
// whole and cacheScope private, a reference with a byte range reaches the
// upstream tool as that range, the upstream's own resources read with a
// cacheScope the protocol has, and tasks/* are not served.
//
// Usage (the Go tests in this folder run it):
//
//	node proxy_copies_client.mjs -- SCROLLBACK_BINARY proxy ARGS...
//	node proxy_copies_client.mjs --url URL
//
// It prints "ok" on stdout; a failed check exits non-zero with the reason
// on stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { EmptyResultSchema } from "@modelcontextprotocol/sdk/types.js";

const args = process.argv.slice(2);
function check(ok, msg) {
  if (!ok) {
    console.error("proxy_copies_client.mjs: " + msg);
    process.exit(1);
  }
}
const client = new Client({ name: "scrollback-proxy-copies-e2e", version: "1.0.0" });
if (args[0] === "--url") {
  await client.connect(new StreamableHTTPClientTransport(new URL(args[1])));
} else {
  check(args[0] === "--" && args.length > 1, "usage: node proxy_copies_client.mjs (-- COMMAND ARGS... | --url URL)");
  await client.connect(new StdioClientTransport({ command: args[1], args: args.slice(2), stderr: "inherit" }));
}

// A result over the budget (the Go test sets --budget 512, the smallest): echo of 100 lines.
const lines = Array.from({ length: 100 }, (_, i) => `line ${i} é`).join("\n");
const res = await client.callTool({ name: "echo", arguments: { message: lines } });
const id = res._meta?.["scrollback/output_id"];
check(typeof id === "string", "echo of 100 lines was not retained: " + JSON.stringify(res).slice(0, 300));
const uri = "scrollback://output/" + id;

let listed = [];
let cursor;
for (let pages = 0; pages < 20; pages++) {
  const page = await client.listResources(cursor ? { cursor } : undefined);
  check(page.cacheScope === "private", "resources/list page cacheScope " + JSON.stringify(page.cacheScope));
  listed.push(...page.resources.map((r) => r.uri));
  cursor = page.nextCursor;
  if (!cursor) break;
}
check(listed.includes(uri), "resources/list lacks the copy " + uri + ": " + JSON.stringify(listed));
check(listed.some((u) => u.startsWith("demo://")), "resources/list lacks the upstream's resources: " + JSON.stringify(listed));
check(listed.indexOf(uri) > listed.findLastIndex((u) => u.startsWith("demo://")), "the copy is listed before the upstream's resources");

const copy = await client.readResource({ uri });
check(copy.cacheScope === "private", "resources/read of a copy: cacheScope " + JSON.stringify(copy.cacheScope));
check(copy.contents[0].text === "Echo: " + lines, "resources/read of a copy: not the whole result");

// "Echo: line 0 é" is 15 bytes (é is two).
const ranged = await client.callTool({ name: "echo", arguments: { message: uri + "#bytes=6-15" } });
check(ranged.content[0].text === "Echo: line 0 é", "a reference with a byte range reached the tool as " + JSON.stringify(ranged.content));

const up = await client.readResource({ uri: "demo://resource/dynamic/text/1" });
check(up.cacheScope === undefined || up.cacheScope === "public" || up.cacheScope === "private",
  "an upstream resource's cacheScope " + JSON.stringify(up.cacheScope));

let tasksErr;
try {
  await client.request({ method: "tasks/list", params: {} }, EmptyResultSchema);
} catch (e) {
  tasksErr = e;
}
check(tasksErr && tasksErr.code === -32601, "tasks/list: " + (tasksErr ? tasksErr.message : "answered"));
await client.close();
console.log("ok");
