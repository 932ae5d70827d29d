const r = await tools.run_command({command: "printf 'a.go\\nb.ts\\nc.go\\nd.md\\n'"});
const files = r.preview.trim().split("\n");
const byExt = Object.groupBy(files, f => f.split(".").at(-1)!);
return Object.fromEntries(Object.entries(byExt).map(([k, v]) => [k, v!.length]));
