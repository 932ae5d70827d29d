// node20-glob.mjs lets the MCP conformance suite (0.1.14 and later, whose
// build imports fs.globSync, a Node 22 function) run on Node 20: loaded with
// `node --import ./node20-glob.mjs`, it gives a module that imports "fs"
// without globSync the standard fs module plus a globSync that finds
// "**/NAME" under a directory, the only pattern the suite uses (to gather
// checks.json files for its report). On Node 22 and later it does nothing.
import fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  register('./node20-glob.mjs', import.meta.url);
}

const shim = new URL('./node20-fs.mjs', import.meta.url).href;

// resolve is the loader hook: "fs" and "node:fs" resolve to the shim,
// except from the shim itself.
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL !== shim) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}
