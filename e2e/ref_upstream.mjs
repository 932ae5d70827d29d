// ref_upstream.mjs is an MCP server made with the official TypeScript SDK,
// for the test of results passed by reference through the proxy. Its
// tools: "make" returns n bytes of mixed-width UTF-8 lines (refText, the
// same as the Go test's); "digest" returns the length in bytes and the
// SHA-256 of its argument "text", as it received it; "calls" returns how
// many times digest was called.
//
// Usage: node ref_upstream.mjs   (speaks MCP on stdio)
import { createHash } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

// refText returns numbered lines of 1-, 2-, 3- and 4-byte characters until
// it holds at least n bytes.
export function refText(n) {
  const parts = [];
  let size = 0;
  for (let i = 1; size < n; i++) {
    const line = "line " + String(i).padStart(7, "0") + " é€😀\n";
    parts.push(line);
    size += Buffer.byteLength(line);
  }
  return parts.join("");
}

let digests = 0;
const server = new McpServer({ name: "ref-upstream", version: "1.0.0" });
server.tool("make", "Return at least n bytes of numbered lines.", { n: z.number().int().positive() }, async ({ n }) => ({
  content: [{ type: "text", text: refText(n) }],
}));
server.tool("digest", "Return the length in bytes and the SHA-256 of text.", { text: z.string() }, async ({ text }) => {
  digests++;
  const b = Buffer.from(text, "utf8");
  return { content: [{ type: "text", text: `${b.length} ${createHash("sha256").update(b).digest("hex")}` }] };
});
server.tool("calls", "How many times digest was called.", {}, async () => ({
  content: [{ type: "text", text: String(digests) }],
}));
await server.connect(new StdioServerTransport());
