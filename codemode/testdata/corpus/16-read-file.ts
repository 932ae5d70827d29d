const dir = (await tools.run_command({command: "mktemp -d"})).preview.trim();
await tools.run_command({command: `printf 'alpha\\nbeta\\ngamma\\n' > ${dir}/f.txt`});
const page = await tools.read_file({path: `${dir}/f.txt`, line: 2, limit: 1});
await tools.run_command({command: `rm -r ${dir}`});
return page.text.trim();
