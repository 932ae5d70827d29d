// The nested result is over the budget: kept before the script sees it.
const big = await tools.run_command({command: "seq 1 20000"});
const first = await tools.read_tool_output({id: big.output_id!, limit: 4096});
return first.text.length;
