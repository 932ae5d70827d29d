const r: any = await tools.run_command({command: "echo hi"});
return [r.gap?.bytes ?? "no gap", r.output_id?.length ?? 0, r.preview?.trim()];
