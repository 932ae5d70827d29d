const r = await tools.run_command({command: "echo 'id=1, id=22, id=333'"});
const ids = [...r.preview.matchAll(/id=(\d+)/g)].map(m => m[1]);
return {ids, masked: r.preview.trim().replaceAll(/\d/g, "#")};
