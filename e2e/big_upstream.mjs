// big_upstream.mjs is an MCP server made with the official TypeScript SDK
// whose tool "big" returns a text result of n bytes: numbered lines
// "line 0000001 ...\n", the last one ending the text. The TypeScript SDK
// writes "jsonrpc" after "result", which is what the proxy's in-transit cut
// must leave alone.
//
// With CHATTY=1 it also writes to its stdout what is not MCP, as many
// servers do: a banner with console.log at start, and each call's
// arguments as Node prints an object.
//
// Usage: node big_upstream.mjs   (speaks MCP on stdio)
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

// bigText returns n bytes of numbered lines, the same as the Go test's.
export function bigText(n) {
  const parts = [];
  let size = 0;
  for (let i = 1; size < n; i++) {
    const line = "line " + String(i).padStart(7, "0") + " of a large result\n";
    parts.push(line);
    size += line.length;
  }
  return parts.join("").slice(0, n);
}

const server = new McpServer({ name: "big-upstream", version: "1.0.0" });
server.tool("big", "Return n bytes of numbered lines.", { n: z.number().int().positive() }, async ({ n }) => {
  if (process.env.CHATTY) console.log({ n });
  return { content: [{ type: "text", text: bigText(n) }] };
});
if (process.env.CHATTY) console.log("big-upstream: running on stdio");
await server.connect(new StdioServerTransport());
