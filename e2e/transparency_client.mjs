// transparency_client.mjs drives transparency_upstream.mjs with the
// official TypeScript SDK client, as a user's client would, and prints
// what it observed as one JSON object, one member per probe. The Go test
// runs it against the upstream directly and through `scrollback proxy`,
// and each probe must observe the same both ways.
//
// Usage (the Go tests in this folder run it):
//
//	node transparency_client.mjs -- COMMAND ARGS...
//	node transparency_client.mjs --url URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitationCompleteNotificationSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const [mode, ...target] = process.argv.slice(2);
if ((mode !== "--" && mode !== "--url") || target.length === 0) {
  console.error("usage: node transparency_client.mjs (-- COMMAND ARGS... | --url URL)");
  process.exit(2);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const client = new Client({ name: "transparency-client", version: "1.0.0" }, { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } });
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (m) => logs.push(m.params.data));
// A sampling request the server gives up on, answered late; one with a
// progress token gets progress first, and an answer at once.
client.setRequestHandler(CreateMessageRequestSchema, async (req, extra) => {
  const token = req.params._meta?.progressToken;
  if (token !== undefined) {
    await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: 1, message: "thinking" } });
    await sleep(100);
    return { role: "assistant", model: "m", content: { type: "text", text: "done" } };
  }
  await new Promise((resolve) => {
    const t = setTimeout(resolve, 1000);
    extra.signal.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    });
  });
  return { role: "assistant", model: "m", content: { type: "text", text: "late" } };
});
const elicited = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  elicited.push({ mode: req.params.mode, url: req.params.url, id: req.params.elicitationId });
  return { action: "accept" };
});
client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///work", name: "work" }] }));
const completed = [];
client.setNotificationHandler(ElicitationCompleteNotificationSchema, (m) => completed.push(m.params.elicitationId));
const changed = { tools: 0, prompts: 0, resources: 0 };
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed.tools++);
client.setNotificationHandler(PromptListChangedNotificationSchema, () => changed.prompts++);
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => changed.resources++);
await client.connect(
  mode === "--url"
    ? new StreamableHTTPClientTransport(new URL(target[0]))
    : new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" }),
);

const own = (name) => ["read_tool_output", "grep_tool_output", "query_tool_output", "run_code"].includes(name);
const scrollbackURI = (u) => u.startsWith("scrollback://");
async function all(list, key) {
  const out = [];
  let cursor;
  do {
    const res = await list(cursor === undefined ? undefined : { cursor });
    out.push(...res[key]);
    cursor = res.nextCursor;
  } while (cursor !== undefined);
  return out;
}
function rpcError(e) {
  return { code: e.code, message: e.message, data: e.data };
}
async function attempt(f) {
  try {
    return { ok: await f() };
  } catch (e) {
    return { error: rpcError(e) };
  }
}
async function withProgress(f) {
  const seen = [];
  const res = await attempt(() => f((p) => seen.push(p.message)));
  await sleep(300); // a notification may trail its response
  return { res: res.error ? res : "ok", progress: seen };
}
function cleanMeta(m) {
  const out = {};
  for (const [k, v] of Object.entries(m ?? {})) {
    if (!k.startsWith("scrollback/") && !k.startsWith("io.modelcontextprotocol/")) out[k] = v;
  }
  return out;
}
const text = (r) => r.content.map((c) => c.text).join("\n");

const obs = {};
const toolNames = (await all((p) => client.listTools(p), "tools")).map((t) => t.name);
obs.tools = toolNames.filter((n) => !own(n));
// The proxy's own tools come after the upstream's.
obs.own_tools_last = toolNames.findIndex(own) === -1 || toolNames.slice(toolNames.findIndex(own)).every(own);
obs.prompts = (await all((p) => client.listPrompts(p), "prompts")).map((p) => p.name);
obs.resources = (await all((p) => client.listResources(p), "resources")).map((r) => r.uri).filter((u) => !scrollbackURI(u));
obs.templates = (await all((p) => client.listResourceTemplates(p), "resourceTemplates")).map((t) => t.uriTemplate).filter((u) => !scrollbackURI(u));

// A client that never sets a log level (most do not) still gets the
// messages a server sends.
await client.callTool({ name: "log", arguments: {} });
for (let i = 0; i < 40 && logs.length === 0; i++) await sleep(50);
obs.logs_without_setLevel = [...logs];

obs.progress_tool = await withProgress((onprogress) => client.callTool({ name: "status", arguments: {} }, undefined, { onprogress }));
obs.progress_read = await withProgress((onprogress) => client.readResource({ uri: "test://r1" }, { onprogress }));
obs.progress_prompt = await withProgress((onprogress) => client.getPrompt({ name: "p1", arguments: { lang: "go" } }, { onprogress }));

// The server sees the capabilities the client declared (roots included).
obs.client_caps = JSON.parse(text(await client.callTool({ name: "client_caps", arguments: {} })));

obs.rpc_error = await attempt(() => client.callTool({ name: "rpc_error", arguments: {} }));
obs.read_missing = await attempt(() => client.readResource({ uri: "test://nope" }));
obs.read_template = await attempt(async () => text({ content: (await client.readResource({ uri: "test://t/x" })).contents }));
obs.prompt_missing = await attempt(() => client.getPrompt({ name: "nope" }));
obs.complete = await attempt(async () => {
  const c = (await client.complete({ ref: { type: "ref/prompt", name: "p1" }, argument: { name: "lang", value: "g" } })).completion;
  return { ...c, hasMore: c.hasMore ?? false }; // the Go SDK leaves a false hasMore out
});

obs.meta = await attempt(async () => {
  const r = await client.callTool({ name: "meta", arguments: {}, _meta: { "example.com/req": 1 } });
  return { meta: cleanMeta(r._meta), structured: r.structuredContent, text: text(r) };
});

// A call the user stops: the server is told, and stops.
const ac = new AbortController();
const slow = attempt(() => client.callTool({ name: "slow", arguments: {} }, undefined, { signal: ac.signal }));
await sleep(500);
ac.abort("stopped by the user");
await slow;
let status;
for (let i = 0; i < 40; i++) {
  status = JSON.parse(text(await client.callTool({ name: "status", arguments: {} })));
  if (status.cancelled.length > 0) break;
  await sleep(50);
}
obs.cancelled = status.cancelled.length;

// A read the user stops: the server is told too.
const ac2 = new AbortController();
const slowRead = attempt(() => client.readResource({ uri: "test://slow" }, { signal: ac2.signal }));
await sleep(500);
ac2.abort("stopped by the user");
await slowRead;
for (let i = 0; i < 40; i++) {
  status = JSON.parse(text(await client.callTool({ name: "status", arguments: {} })));
  if (status.cancelled.length > obs.cancelled) break;
  await sleep(50);
}
obs.cancelled_read = status.cancelled.length - obs.cancelled;

obs.sample_timeout = text(await client.callTool({ name: "sample_timeout", arguments: {} }));

// The client's progress on a request of the server reaches the server.
obs.sample_progress = text(await client.callTool({ name: "sample_progress", arguments: {} }));

obs.url_elicit = text(await client.callTool({ name: "url_elicit", arguments: {} }));
for (let i = 0; i < 40 && completed.length === 0; i++) await sleep(50);
obs.elicitation = { asked: elicited, completed };

// No list changed so far: the client was told of none. (Of its tools it
// may be: over stdio the proxy connects to the upstream again as the
// client initializes, to declare the client's capabilities, and the
// upstream then offers one tool more, "sampled".)
await sleep(300);
obs.list_changed_before = { prompts: changed.prompts, resources: changed.resources };
const changedBefore = { ...changed };
await client.callTool({ name: "grow", arguments: {} });
for (let i = 0; i < 60 && !(changed.tools > changedBefore.tools && changed.prompts > changedBefore.prompts && changed.resources > changedBefore.resources); i++) await sleep(50);
obs.grown = {
  tools: (await all((p) => client.listTools(p), "tools")).map((t) => t.name).filter((n) => !own(n)),
  prompts: (await all((p) => client.listPrompts(p), "prompts")).map((p) => p.name),
  resources: (await all((p) => client.listResources(p), "resources")).map((r) => r.uri).filter((u) => !scrollbackURI(u)),
  told: { tools: changed.tools > changedBefore.tools, prompts: changed.prompts > changedBefore.prompts, resources: changed.resources > changedBefore.resources },
};

// Told again, with nothing new: the client is told all the same.
const before = { ...changed };
await client.callTool({ name: "grow", arguments: {} });
for (let i = 0; i < 60 && !(changed.tools > before.tools && changed.prompts > before.prompts && changed.resources > before.resources); i++) await sleep(50);
obs.told_unchanged = { tools: changed.tools > before.tools, prompts: changed.prompts > before.prompts, resources: changed.resources > before.resources };

await client.setLoggingLevel("warning");
obs.level = JSON.parse(text(await client.callTool({ name: "status", arguments: {} }))).level;

await client.close();
console.log(JSON.stringify(obs));
