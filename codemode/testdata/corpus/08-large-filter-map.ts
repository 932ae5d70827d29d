const r = await tools.run_command({command: "seq 1 20000"});
// The preview is cut; read the whole copy page by page.
let text = "", offset = 0;
while (true) {
  const page = await tools.read_tool_output({id: r.output_id!, offset});
  text += page.text;
  if (!page.hasMore) break;
  offset = page.nextOffset;
}
const nums = text.split("\n").filter(Boolean).map(Number);
const evens = nums.filter(n => n % 2 === 0).map(n => n * 10);
return {count: nums.length, evens: evens.length, last: evens.at(-1), truncated: r.truncated};
