// relay_client.mjs drives `scrollback proxy` in front of relay_upstream.mjs
// with the official TypeScript SDK client, as client NAME: its sampling,
// elicitation and roots handlers answer with NAME. It sets the log level,
// subscribes to test://r, calls "ask" N times at once (with progress), and
// checks that every answer is its own, that it was asked exactly N times
// for sampling (never for another client), that progress and the log
// message arrived, and that test://r's updates arrive, again after the
// upstream crashed and was started again.
//
// Usage (the Go tests in this folder run it):
//
//	node relay_client.mjs NAME N --url URL
//	node relay_client.mjs NAME N -- SCROLLBACK_BINARY proxy ARGS...
//
// It prints a JSON summary ({name, asks, sampled, progress, logs, updated})
// on stdout; any failed check exits non-zero with the reason on stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [name, nArg, mode, ...rest] = process.argv.slice(2);
const n = Number(nArg);
function check(ok, msg) {
  if (!ok) {
    console.error("relay_client.mjs " + name + ": " + msg);
    process.exit(1);
  }
}
check(name && n > 0 && (mode === "--url" || mode === "--") && rest.length > 0, "usage: node relay_client.mjs NAME N (--url URL | -- COMMAND ARGS...)");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function until(what, cond) {
  for (let i = 0; i < 600; i++) {
    if (cond()) return;
    await sleep(50);
  }
  check(false, what + ": never happened");
}

const client = new Client({ name: "relay-" + name, version: "1.0.0" }, { capabilities: { sampling: {}, elicitation: {}, roots: { listChanged: true } } });
let sampled = 0;
client.setRequestHandler(CreateMessageRequestSchema, async () => {
  sampled++;
  await sleep(100); // keep the requests of both clients in flight together
  return { role: "assistant", model: "m", content: { type: "text", text: name } };
});
client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: { name } }));
client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///" + name, name }] }));
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (m) => logs.push(m.params.data));
const updated = [];
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (m) => updated.push(m.params.uri));

const transport =
  mode === "--url"
    ? new StreamableHTTPClientTransport(new URL(rest[0]))
    : new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" });
await client.connect(transport);
await client.setLoggingLevel("debug");
await client.subscribeResource({ uri: "test://r" });

const progress = [];
const want = `sampling: ${name}\nelicitation: accept ${name}\nroots: file:///${name}`;
const results = await Promise.all(
  Array.from({ length: n }, () => client.callTool({ name: "ask", arguments: {} }, undefined, { onprogress: (p) => progress.push(p) })),
);
for (const r of results) {
  const text = r.content.map((c) => c.text).join("\n");
  check(!r.isError && text === want, "ask answered " + JSON.stringify(text) + ", want " + JSON.stringify(want));
}
check(sampled === n, `asked for sampling ${sampled} times, want ${n} (its own calls only)`);
await until("progress of every call", () => progress.length === n);
check(progress.every((p) => p.progress === 1 && p.total === 2 && p.message === "half"), "progress " + JSON.stringify(progress));
await until("the upstream's log messages", () => logs.length >= n);
check(logs.every((l) => l === "hello from upstream"), "logs " + JSON.stringify(logs));

await client.callTool({ name: "touch", arguments: {} });
await until("notifications/resources/updated", () => updated.length === 1);
// The upstream crashes; the proxy starts it again on the next call and
// renews the subscription there.
const crash = await client.callTool({ name: "crash", arguments: {} });
check(crash.isError, "crash did not fail: " + JSON.stringify(crash));
const touched = await client.callTool({ name: "touch", arguments: {} });
check(!touched.isError && touched.content[0].text.includes("test://r"), "after a restart the subscription was not renewed: " + JSON.stringify(touched));
await until("notifications/resources/updated after the restart", () => updated.length === 2);
check(updated.every((u) => u === "test://r"), "updated " + JSON.stringify(updated));

if (mode === "--url") {
  await transport.terminateSession(); // the proxy closes this client's upstream connection
}
await client.close();
console.log(JSON.stringify({ name, asks: n, sampled, progress: progress.length, logs: logs.length, updated: updated.length }));
