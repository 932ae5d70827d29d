const r = await tools.run_command({command: "printf 'b\\na\\nb\\nc\\nb\\n'"});
const counts = new Map<string, number>();
for (const w of r.preview.trim().split("\n")) counts.set(w, (counts.get(w) ?? 0) + 1);
return {counts, letters: new Set(counts.keys()), total: 5n};
