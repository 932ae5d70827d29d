// transparency_upstream.mjs is an MCP server made with the official
// TypeScript SDK's low-level Server, so that it can do what a server may do
// and McpServer hides: it pages its lists (two items a page, with cursors),
// answers with JSON-RPC errors of its own codes and data, sends progress
// for resources/read and prompts/get as well as for tools, sends log
// messages whether or not the client set a level (as the SDK does), and
// notes what the client cancelled. transparency_client.mjs drives it,
// directly and through the proxy.
//
// Usage: node transparency_upstream.mjs   (speaks MCP on stdio)
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const server = new Server(
  { name: "transparency-upstream", version: "1.0.0" },
  { capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true }, logging: {}, completions: {} } },
);

const schema = { type: "object", properties: {} };
const tools = ["log", "slow", "status", "rpc_error", "meta", "sample_timeout", "url_elicit", "grow", "client_caps", "sample_progress"].map((name) => ({ name, description: "test tool " + name, inputSchema: schema }));
const prompts = ["p2", "p3", "p1"].map((name) => ({ name, description: "prompt " + name, arguments: [{ name: "lang", required: false }] }));
const resources = ["r3", "r1", "r2"].map((name) => ({ uri: "test://" + name, name, mimeType: "text/plain" }));

// page serves items two at a time; the cursor is the next index.
function page(items, cursor) {
  const i = cursor === undefined ? 0 : Number(cursor);
  if (!Number.isInteger(i) || i < 0 || i > items.length) {
    throw new McpError(-32602, "bad cursor " + cursor);
  }
  const out = { items: items.slice(i, i + 2) };
  if (i + 2 < items.length) out.nextCursor = String(i + 2);
  return out;
}

const seen = { cancelled: [], level: null };

async function progress(extra, message) {
  const token = extra._meta?.progressToken;
  if (token !== undefined) {
    await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: 1, total: 1, message } });
    // The TypeScript SDK's client drops a progress notification that it
    // reads together with its request's response: keep them apart.
    await new Promise((r) => setTimeout(r, 100));
  }
}

// "sampled" is offered only to a client that can sample, as servers do
// with tools that need a capability of the client.
const sampled = { name: "sampled", description: "offered to clients with sampling", inputSchema: schema };
server.setRequestHandler(ListToolsRequestSchema, async (req) => {
  const offered = server.getClientCapabilities()?.sampling ? [...tools, sampled] : tools;
  const { items, nextCursor } = page(offered, req.params?.cursor);
  return { tools: items, nextCursor };
});
server.setRequestHandler(ListPromptsRequestSchema, async (req) => {
  const { items, nextCursor } = page(prompts, req.params?.cursor);
  return { prompts: items, nextCursor };
});
server.setRequestHandler(ListResourcesRequestSchema, async (req) => {
  const { items, nextCursor } = page(resources, req.params?.cursor);
  return { resources: items, nextCursor };
});
server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
  resourceTemplates: [{ uriTemplate: "test://t/{name}", name: "t", mimeType: "text/plain" }],
}));
server.setRequestHandler(SetLevelRequestSchema, async (req) => {
  seen.level = req.params.level;
  return {};
});
server.setRequestHandler(CompleteRequestSchema, async (req) => ({
  completion: { values: ["go", "ts"].filter((v) => v.startsWith(req.params.argument.value)), total: 2, hasMore: false },
}));
server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
  const uri = req.params.uri;
  if (uri === "test://slow") {
    // Read until the client cancels it (or 20 s), noting the reason.
    await new Promise((resolve) => {
      const t = setTimeout(resolve, 20000);
      extra.signal.addEventListener("abort", () => {
        clearTimeout(t);
        seen.cancelled.push("read: " + String(extra.signal.reason?.message ?? extra.signal.reason));
        resolve();
      });
    });
    return { contents: [{ uri, text: "slow" }] };
  }
  if (!resources.some((r) => r.uri === uri) && !uri.startsWith("test://t/")) {
    throw new McpError(-32002, "Resource not found", { uri });
  }
  await progress(extra, "reading " + uri);
  return { contents: [{ uri, mimeType: "text/plain", text: "text of " + uri }] };
});
server.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
  if (!prompts.some((p) => p.name === req.params.name)) {
    throw new McpError(-32602, "no prompt " + req.params.name, { name: req.params.name });
  }
  await progress(extra, "prompting " + req.params.name);
  return { messages: [{ role: "user", content: { type: "text", text: "prompt " + req.params.name + " " + (req.params.arguments?.lang ?? "") } }] };
});

server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
  await progress(extra, "calling " + req.params.name);
  switch (req.params.name) {
    case "log":
      // As a server that never heard from the client about levels does:
      // the SDK sends it, since no level is set.
      await server.sendLoggingMessage({ level: "info", logger: "transparency", data: "log message" });
      return { content: [{ type: "text", text: "logged" }] };
    case "slow":
      // Runs until the client cancels it (or 20 s), and notes the reason.
      await new Promise((resolve) => {
        const t = setTimeout(resolve, 20000);
        extra.signal.addEventListener("abort", () => {
          clearTimeout(t);
          seen.cancelled.push(String(extra.signal.reason?.message ?? extra.signal.reason));
          resolve();
        });
      });
      return { content: [{ type: "text", text: "slow done" }] };
    case "status":
      return { content: [{ type: "text", text: JSON.stringify(seen) }] };
    case "rpc_error":
      throw new McpError(-32042, "an error of the server's own", { detail: "kept" });
    case "sample_timeout":
      // Gives up on its sampling request after 300 ms: the client is told
      // (notifications/cancelled) and stops.
      try {
        await extra.sendRequest(
          { method: "sampling/createMessage", params: { maxTokens: 10, messages: [{ role: "user", content: { type: "text", text: "hi" } }] } },
          CreateMessageResultSchema,
          { timeout: 300 },
        );
        return { content: [{ type: "text", text: "sampled" }] };
      } catch (e) {
        return { content: [{ type: "text", text: "gave up" }] };
      }
    case "url_elicit": {
      // URL-mode elicitation (2025-11-25): the server asks the user to open
      // a URL, then tells the client the interaction is complete.
      const r = await extra.sendRequest(
        { method: "elicitation/create", params: { mode: "url", elicitationId: "e-1", url: "https://example.com/consent", message: "open this" } },
        ElicitResultSchema,
      );
      await server.notification({ method: "notifications/elicitation/complete", params: { elicitationId: "e-1" } });
      return { content: [{ type: "text", text: "elicited: " + r.action }] };
    }
    case "grow":
      // Adds a tool, a prompt and a resource, and says so.
      if (!tools.some((t) => t.name === "grown")) {
        tools.push({ name: "grown", description: "added later", inputSchema: schema });
        prompts.push({ name: "grown", description: "added later" });
        resources.push({ uri: "test://grown", name: "grown", mimeType: "text/plain" });
      }
      await server.sendToolListChanged();
      await server.sendPromptListChanged();
      await server.sendResourceListChanged();
      return { content: [{ type: "text", text: "grown" }] };
    case "sample_progress": {
      // Asks to sample with a progress token, and notes the client's
      // progress on it.
      const seenProgress = [];
      await extra.sendRequest(
        { method: "sampling/createMessage", params: { maxTokens: 10, messages: [{ role: "user", content: { type: "text", text: "progress" } }] } },
        CreateMessageResultSchema,
        { onprogress: (p) => seenProgress.push(p.message) },
      );
      await new Promise((r) => setTimeout(r, 300));
      return { content: [{ type: "text", text: JSON.stringify(seenProgress) }] };
    }
    case "client_caps":
      // What the client declared, as the server sees it.
      return { content: [{ type: "text", text: JSON.stringify(server.getClientCapabilities()) }] };
    case "meta":
      return { _meta: { "example.com/k": "v", got: req.params._meta ?? null }, content: [{ type: "text", text: "meta" }], structuredContent: { ok: true } };
  }
  throw new McpError(-32602, "Unknown tool: " + req.params.name);
});

await server.connect(new StdioServerTransport());
