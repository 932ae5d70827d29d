const r = await tools.run_command({command: "printf 'a b\\nc d e\\n'"});
return r.preview.trim().split("\n").flatMap(l => l.split(" ")).length;
