const r = await tools.run_command({command: "echo hi"});
return r.preview;
