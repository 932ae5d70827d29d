const r = await tools.run_command({command: "sleep 5", timeout_ms: 100});
return {timedOut: r.timed_out};
