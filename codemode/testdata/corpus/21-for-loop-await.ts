const out: string[] = [];
for (const n of [1, 2, 3]) {
  const r = await tools.run_command({command: `echo line${n}`});
  out.push(r.preview.trim());
}
return out.join(",");
