const r = await tools.run_command({command: "seq 1 20000 | awk '{print ($1 * 7919) % 10007}'"});
let text = "", offset = 0, more = true;
while (more) {
  const p = await tools.read_tool_output({id: r.output_id!, offset});
  text += p.text; offset = p.nextOffset; more = p.hasMore;
}
const top = text.split("\n").filter(Boolean).map(Number).toSorted((a, b) => b - a).slice(0, 3);
return {top, retainedBefore: Boolean(r.output_id)};
