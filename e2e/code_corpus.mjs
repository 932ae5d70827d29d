// code_corpus.mjs runs Code Mode's corpus (codemode/testdata/corpus: scripts
// written the way models write them, and expect.json) through scrollback's
// MCP server with the official TypeScript SDK client, as an agent would:
// it reads run_code's description (a TypeScript declaration of the tools),
// then calls run_code with each script and checks the structured result
// against the same expectations the Go table test uses; then a few failing
// scripts (TypeScript errors, limits with async code), checking the error's
// kind and line.
//
// Usage (e2e_test.go runs it):
//
//	node code_corpus.mjs CORPUS_DIR -- SERVER_BINARY ARGS...
//
// It prints a JSON summary on stdout; any failed check exits non-zero with
// the reasons on stderr.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [dir, sep, ...target] = process.argv.slice(2);
if (!dir || sep !== "--" || target.length === 0) {
  console.error("usage: node code_corpus.mjs CORPUS_DIR -- SERVER_BINARY ARGS...");
  process.exit(2);
}

const expect = JSON.parse(readFileSync(join(dir, "expect.json"), "utf8"));
const files = readdirSync(dir).filter((f) => /\.[jt]s$/.test(f)).sort();
const failures = [];
const fail = (msg) => failures.push(msg);

const client = new Client({ name: "scrollback-e2e-code", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: "inherit" }));

const { tools } = await client.listTools();
const runCode = tools.find((t) => t.name === "run_code");
if (!runCode) {
  console.error("code_corpus.mjs: no run_code tool");
  process.exit(1);
}
const d = runCode.description;
for (const want of ["declare const tools: {", "run_command(input: any): Promise<{ preview: string;", "output_id?: string;", "async function"]) {
  if (!d.includes(want)) fail(`run_code's description lacks ${JSON.stringify(want)}`);
}
if (Buffer.byteLength(d) >= 4096) fail(`run_code's description is ${Buffer.byteLength(d)} bytes, want under 4 KiB`);

let passed = 0;
if (files.length < 30 || files.length !== Object.keys(expect).length) fail(`${files.length} scripts, ${Object.keys(expect).length} expectations`);
for (const f of files) {
  const want = expect[f];
  if (!want) {
    fail(`${f}: no expectation`);
    continue;
  }
  const code = readFileSync(join(dir, f), "utf8");
  const res = await client.callTool({ name: "run_code", arguments: { code } });
  const sc = res.structuredContent;
  const errs = [];
  if (res.isError || !sc) errs.push("tool error: " + JSON.stringify(res.content));
  else {
    if (sc.error) errs.push("script error: " + JSON.stringify(sc.error));
    if (sc.preview !== want.value) errs.push(`value ${JSON.stringify(sc.preview)}, want ${JSON.stringify(want.value)}`);
    if (!Array.isArray(sc.retained) || sc.retained.length !== want.retained) errs.push(`retained ${JSON.stringify(sc.retained)}, want ${want.retained}`);
    if (want.logs && sc.logs !== want.logs) errs.push(`logs ${JSON.stringify(sc.logs)}, want ${JSON.stringify(want.logs)}`);
    for (const r of sc.retained ?? []) {
      const page = await client.callTool({ name: "read_tool_output", arguments: { id: r.output_id, limit: 16 } });
      if (page.isError) errs.push(`retained ${r.output_id} cannot be read: ${JSON.stringify(page.content)}`);
    }
  }
  if (errs.length) fail(`${f}: ${errs.join("; ")}`);
  else passed++;
}
// Scripts that fail: the error's kind, and its line in the code as the
// model wrote it (TypeScript included), through the same client. The
// limits hold with async code.
const errorCases = [
  { name: "TypeScript runtime error", code: "interface A { x?: { y: number } }\nconst a: A = {};\nreturn a.x!.y", kind: "exception", line: 3, msg: "TypeError" },
  { name: "TypeScript syntax error", code: "type Id = string;\nconst id: Id = ;", kind: "syntax", line: 2, msg: "SyntaxError" },
  { name: "rejected promise", code: "async function f(): Promise<number> {\n  await null;\n  throw new RangeError('late');\n}\nreturn await f();", kind: "exception", line: 3, msg: "RangeError: late" },
  { name: "loop in an async helper", code: "async function spin(): Promise<void> {\n  let n = 0; while (true) { n++ }\n}\nawait spin();", timeout_ms: 300, kind: "timeout", line: 2 },
  { name: "microtask loop", code: "let n: number = 0;\nfor (;;) { n++; await null; }", timeout_ms: 300, kind: "timeout", line: 2 },
  { name: "awaited promise that never settles", code: "await new Promise<void>(() => {});", timeout_ms: 300, kind: "timeout", msg: "never settled" },
  // A busy machine must not turn the memory stop into a timeout.
  { name: "doubling string", code: "let s = 'x';\nwhile (true) { s += s; await null; }", timeout_ms: 600000, kind: "memory", line: 2, msg: "memory limit exceeded" },
];
let errorsPassed = 0;
for (const c of errorCases) {
  const args = { code: c.code };
  if (c.timeout_ms) args.timeout_ms = c.timeout_ms;
  const res = await client.callTool({ name: "run_code", arguments: args });
  const e = res.structuredContent?.error;
  const errs = [];
  if (!e) errs.push("no error: " + JSON.stringify(res.structuredContent ?? res.content));
  else {
    if (e.kind !== c.kind) errs.push(`kind ${e.kind}, want ${c.kind}`);
    if (c.line && e.line !== c.line) errs.push(`line ${e.line}, want ${c.line}`);
    if (c.msg && !String(e.message).includes(c.msg)) errs.push(`message ${JSON.stringify(e.message)} lacks ${JSON.stringify(c.msg)}`);
  }
  if (errs.length) fail(`${c.name}: ${errs.join("; ")}`);
  else errorsPassed++;
}
await client.close();

if (failures.length) {
  console.error("code_corpus.mjs:\n" + failures.join("\n"));
  process.exit(1);
}
console.log(JSON.stringify({ scripts: files.length, passed, errors: errorCases.length, errorsPassed }));
