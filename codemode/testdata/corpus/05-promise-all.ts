const cmds = ["echo one", "echo two", "echo three"];
const results = await Promise.all(cmds.map(command => tools.run_command({command})));
return results.map(r => r.preview.trim());
