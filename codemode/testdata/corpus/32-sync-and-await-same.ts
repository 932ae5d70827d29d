const a = tools.run_command({command: "echo same"}).preview;
const b = (await tools.run_command({command: "echo same"})).preview;
const c = await tools.run_command({command: "echo same"}).then(r => r.preview);
return a === b && b === c;
