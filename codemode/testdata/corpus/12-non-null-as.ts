type Page = { text: string; hasMore: boolean };
const r = await tools.run_command({command: "seq 1 10000"});
const page = (await tools.read_tool_output({id: r.output_id!, limit: 20})) as Page;
return page.text.split("\n")[3]!;
