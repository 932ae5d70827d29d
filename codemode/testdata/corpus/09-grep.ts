const r = await tools.run_command({command: "seq 1 20000"});
const g = await tools.grep_tool_output({id: r.output_id!, pattern: "^1999[0-9]$"});
return g.matches!.map(m => m.text);
