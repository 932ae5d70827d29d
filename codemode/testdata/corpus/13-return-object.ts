const r = await tools.run_command({command: "echo ok"});
return {ok: r.exit_code === 0, out: r.preview.trim(), timedOut: r.timed_out};
