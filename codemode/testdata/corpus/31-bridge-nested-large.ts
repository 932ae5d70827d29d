// The nested command's output is over the budget: its own copy is kept, and
// listed in retained, before the script sees the result.
const big = await tools.run_command({command: "seq 1 20000"});
const first = await tools.read_tool_output({id: big.output_id!, limit: 4096});
return first.text.length;
