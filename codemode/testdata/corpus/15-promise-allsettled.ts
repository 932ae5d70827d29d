const ids = ["out_nope_1", "out_nope_2"];
const settled = await Promise.allSettled(ids.map(async id => tools.read_tool_output({id})));
return settled.map(s => s.status);
