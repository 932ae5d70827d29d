const r = await tools.run_command({command: "echo v"});
const copy = structuredClone(r);
copy.preview = "changed";
return [r.preview.trim(), copy.preview, typeof (copy as any).then];
