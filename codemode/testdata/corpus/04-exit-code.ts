const r = await tools.run_command({command: "exit 3"});
return `exit code: ${r.exit_code}`;
