const r = await tools.run_command({command: "echo logged"});
console.log("got", r.preview.trim());
console.warn("careful");
return "done";
