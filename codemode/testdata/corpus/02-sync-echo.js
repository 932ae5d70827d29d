const r = tools.run_command({command: "echo hi"});
return r.preview.trim();
