// node20-fs.mjs is the fs module with a globSync for Node 20; see
// node20-glob.mjs.
import fs from 'node:fs';
import path from 'node:path';

export * from 'node:fs';
export default fs;

// globSync finds the files matching "**/NAME" (NAME without wildcards)
// under options.cwd, as paths relative to it; other patterns throw.
export function globSync(pattern, options = {}) {
  const m = /^\*\*\/([^*?[\]{}]+)$/.exec(pattern);
  if (!m) {
    throw new Error(`node20-fs: globSync supports only "**/NAME" patterns on Node 20, not ${JSON.stringify(pattern)}`);
  }
  const root = options.cwd ?? process.cwd();
  const out = [];
  const walk = (rel) => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const p = rel ? path.join(rel, e.name) : e.name;
      if (e.isDirectory()) walk(p);
      else if (e.name === m[1]) out.push(p);
    }
  };
  walk('');
  return out;
}
