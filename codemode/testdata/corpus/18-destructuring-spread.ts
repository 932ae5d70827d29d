const {preview, exit_code: code, ...rest} = await tools.run_command({command: "echo x"});
const merged = {...{a: 1}, code, hasDuration: "duration_ms" in rest};
return merged;
