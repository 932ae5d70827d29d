return tools.run_command({command: "echo 21"})
  .then(r => Number(r.preview.trim()))
  .then(n => n * 2);
