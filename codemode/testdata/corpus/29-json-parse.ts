const r = await tools.run_command({command: `echo '{"items":[{"n":1},{"n":2},{"n":3}]}'`});
const data: {items: {n: number}[]} = JSON.parse(r.preview);
return data.items.reduce((sum, it) => sum + it.n, 0);
