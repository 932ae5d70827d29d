// relay_upstream.mjs is an MCP server made with the official TypeScript
// SDK that does, during its tool "ask", everything a server may do towards
// its client: progress (when the call has a progress token), a log
// message, sampling, elicitation and roots; it returns what the client
// answered. Its resource test://r can be subscribed to; "touch" reports it
// updated to the subscribers; "crash" exits the process mid-call.
//
// Usage: node relay_upstream.mjs   (speaks MCP on stdio)
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  ListRootsResultSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

const server = new McpServer({ name: "relay-upstream", version: "1.0.0" }, { capabilities: { logging: {} } });
const subs = new Set();

server.registerTool("ask", { description: "Ask the client for sampling, elicitation and roots." }, async (extra) => {
  const token = extra._meta?.progressToken;
  if (token !== undefined) {
    await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: 1, total: 2, message: "half" } });
  }
  await server.sendLoggingMessage({ level: "info", logger: "relay", data: "hello from upstream" });
  const answers = [];
  try {
    const m = await extra.sendRequest(
      { method: "sampling/createMessage", params: { maxTokens: 10, messages: [{ role: "user", content: { type: "text", text: "hi" } }] } },
      CreateMessageResultSchema,
    );
    answers.push("sampling: " + m.content.text);
  } catch (e) {
    answers.push("sampling error: " + e.message);
  }
  try {
    const e = await extra.sendRequest(
      { method: "elicitation/create", params: { message: "name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } } },
      ElicitResultSchema,
    );
    answers.push("elicitation: " + e.action + " " + e.content?.name);
  } catch (e) {
    answers.push("elicitation error: " + e.message);
  }
  try {
    const r = await extra.sendRequest({ method: "roots/list" }, ListRootsResultSchema);
    answers.push("roots: " + r.roots.map((x) => x.uri).join(" "));
  } catch (e) {
    answers.push("roots error: " + e.message);
  }
  return { content: [{ type: "text", text: answers.join("\n") }] };
});

server.registerTool("touch", { description: "Report test://r updated." }, async () => {
  if (subs.has("test://r")) {
    await server.server.sendResourceUpdated({ uri: "test://r" });
  }
  return { content: [{ type: "text", text: "touched; subscribed: " + [...subs].join(" ") }] };
});

server.registerTool("crash", { description: "Exit the process mid-call." }, async () => {
  process.exit(3);
});

server.registerResource("r", "test://r", { mimeType: "text/plain" }, async (uri) => ({ contents: [{ uri: uri.href, text: "r" }] }));
server.server.registerCapabilities({ resources: { subscribe: true } });
server.server.setRequestHandler(SubscribeRequestSchema, async (req) => {
  subs.add(req.params.uri);
  return {};
});
server.server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
  subs.delete(req.params.uri);
  return {};
});

await server.connect(new StdioServerTransport());
