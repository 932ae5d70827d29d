const r = await tools.run_command({command: "printf 'x\\ny\\nx\\nz\\ny\\nx\\n'"});
const words = r.preview.trim().split("\n");
const counts = new Map<string, number>();
for (const w of words) counts.set(w, (counts.get(w) ?? 0) + 1);
return {unique: new Set(words).size, top: [...counts.entries()].sort((a, b) => b[1] - a[1])[0]};
