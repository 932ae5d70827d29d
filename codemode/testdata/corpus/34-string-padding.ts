const r = await tools.run_command({command: "printf '7\\n42\\n'"});
return r.preview.trim().split("\n").map(n => n.padStart(4, "0")).join(" ");
