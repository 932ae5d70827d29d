#!/usr/bin/env node
// Builds the npm packages of a scrollback release into OUT:
//   OUT/scrollback/       the launcher package (npm/scrollback), its version
//                         and its optional dependencies' set to VERSION;
//   OUT/PLATFORM/         @scrollback/PLATFORM (linux-x64, darwin-arm64, ...,
//                         win32-x64): the binary in bin/, and "os" and "cpu"
//                         so that npm installs only the one that fits.
//
//   node npm/build.mjs --version 1.2.3 --dist dist --out npm/out
//       the binaries of a GoReleaser release (dist/artifacts.json)
//   node npm/build.mjs --version 1.2.3 --go [--platform host] --out npm/out
//       go build, for every platform or only this machine's (--platform
//       host, or a list such as linux-x64,darwin-arm64)
//
// Then `npm publish` in each OUT/PLATFORM first, and in OUT/scrollback
// last (.github/workflows/release.yml does), or `npm pack` to try them
// (scripts/npm-check.sh).
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..');

// npm's platform names and Go's.
const platforms = {
  'darwin-arm64': { goos: 'darwin', goarch: 'arm64', os: 'darwin', cpu: 'arm64' },
  'darwin-x64': { goos: 'darwin', goarch: 'amd64', os: 'darwin', cpu: 'x64' },
  'linux-arm64': { goos: 'linux', goarch: 'arm64', os: 'linux', cpu: 'arm64' },
  'linux-x64': { goos: 'linux', goarch: 'amd64', os: 'linux', cpu: 'x64' },
  'win32-arm64': { goos: 'windows', goarch: 'arm64', os: 'win32', cpu: 'arm64' },
  'win32-x64': { goos: 'windows', goarch: 'amd64', os: 'win32', cpu: 'x64' },
};

function usage(message) {
  process.stderr.write(`npm/build.mjs: ${message}\nusage: node npm/build.mjs --version VERSION (--dist DIR | --go) [--platform host|all|NAME,...] --out DIR\n`);
  process.exit(2);
}

const { values: opts } = parseArgs({
  options: {
    version: { type: 'string' },
    dist: { type: 'string' },
    go: { type: 'boolean', default: false },
    platform: { type: 'string', default: 'all' },
    out: { type: 'string' },
  },
});
if (!opts.version || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(opts.version)) {
  usage(`give --version as a semantic version such as 1.2.3 or 1.2.3-rc.1 (got ${JSON.stringify(opts.version)})`);
}
if (!opts.out) usage('give --out, the directory to build the packages in');
if (!!opts.dist === opts.go) usage('give either --dist DIR (GoReleaser\'s output) or --go (go build)');

let names;
if (opts.platform === 'all') {
  names = Object.keys(platforms);
} else if (opts.platform === 'host') {
  names = [`${process.platform}-${process.arch}`];
} else {
  names = opts.platform.split(',');
}
for (const n of names) {
  if (!platforms[n]) usage(`no platform ${n}: the platforms are ${Object.keys(platforms).join(', ')}`);
}

const out = resolve(opts.out);
const version = opts.version;
const launcher = JSON.parse(readFileSync(join(here, 'scrollback', 'package.json'), 'utf8'));

// The GoReleaser binaries by platform, from dist/artifacts.json: only the
// build with id scrollback (.goreleaser.yaml), not scrollback-eval's, whose
// name starts the same way. Paths are relative to where goreleaser ran,
// which is where this runs.
let artifacts = {};
if (opts.dist) {
  const list = JSON.parse(readFileSync(join(opts.dist, 'artifacts.json'), 'utf8'));
  for (const a of list) {
    const id = a.extra && a.extra.ID;
    if (a.type !== 'Binary' || id !== 'scrollback') continue;
    const key = `${a.goos}/${a.goarch}`;
    if (artifacts[key]) usage(`${opts.dist}/artifacts.json has two scrollback binaries for ${key}: ${artifacts[key]} and ${a.path}`);
    artifacts[key] = resolve(a.path);
  }
}

for (const name of names) {
  const p = platforms[name];
  const dir = join(out, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'bin'), { recursive: true });
  const exe = p.goos === 'windows' ? 'scrollback.exe' : 'scrollback';
  const bin = join(dir, 'bin', exe);
  if (opts.dist) {
    const from = artifacts[`${p.goos}/${p.goarch}`];
    if (!from || !existsSync(from)) {
      usage(`${opts.dist}/artifacts.json has no scrollback binary for ${p.goos}/${p.goarch}: run goreleaser release (or build) for it first`);
    }
    copyFileSync(from, bin);
  } else {
    process.stderr.write(`go build ${p.goos}/${p.goarch} -> ${bin}\n`);
    execFileSync('go', ['build', '-tags', 'grpcnotrace', '-trimpath', '-ldflags',
      `-s -w -X github.com/scrollback-dev/scrollback/internal/cli.version=${version}`,
      '-o', bin, './cmd/scrollback'], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, GOOS: p.goos, GOARCH: p.goarch, CGO_ENABLED: '0' },
    });
  }
  chmodSync(bin, 0o755);
  const pkg = {
    name: `@scrollback/${name}`,
    version,
    description: `The scrollback binary for ${p.goos}/${p.goarch}; install the package scrollback, which uses it`,
    repository: launcher.repository,
    homepage: launcher.homepage,
    os: [p.os],
    cpu: [p.cpu],
    files: [`bin/${exe}`],
    preferUnplugged: true,
  };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pkg, null, 2) + '\n');
  writeFileSync(join(dir, 'README.md'), `# ${pkg.name}\n\nThe prebuilt \`scrollback\` binary for ${p.goos}/${p.goarch}. Install [scrollback](https://www.npmjs.com/package/scrollback) instead: it depends on this package where it fits.\n`);
}

// The launcher package, pinned to this version's binaries.
const main = join(out, 'scrollback');
rmSync(main, { recursive: true, force: true });
mkdirSync(join(main, 'bin'), { recursive: true });
copyFileSync(join(here, 'scrollback', 'bin', 'scrollback.js'), join(main, 'bin', 'scrollback.js'));
chmodSync(join(main, 'bin', 'scrollback.js'), 0o755);
copyFileSync(join(here, 'scrollback', 'README.md'), join(main, 'README.md'));
launcher.version = version;
for (const dep of Object.keys(launcher.optionalDependencies)) {
  launcher.optionalDependencies[dep] = version;
}
writeFileSync(join(main, 'package.json'), JSON.stringify(launcher, null, 2) + '\n');
process.stderr.write(`npm packages ${version} in ${out}: scrollback, ${names.map((n) => '@scrollback/' + n).join(', ')}\n`);
