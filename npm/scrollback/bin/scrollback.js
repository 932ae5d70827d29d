#!/usr/bin/env node
// scrollback's npm launcher: finds the prebuilt binary that npm installed
// for this platform, as an optional dependency (@scrollback/linux-x64,
// @scrollback/darwin-arm64, ...: npm installs only the one whose "os" and
// "cpu" match), and runs it with this process's arguments and stdio, so
// that `npx -y scrollback mcp` is an MCP server on stdio. Its exit status
// is this process's; a signal that ends it ends this process the same way,
// and the signals this process gets are passed on to it.
'use strict';

const { spawn } = require('child_process');

const packages = {
  'darwin arm64': '@scrollback/darwin-arm64',
  'darwin x64': '@scrollback/darwin-x64',
  'linux arm64': '@scrollback/linux-arm64',
  'linux x64': '@scrollback/linux-x64',
  'win32 arm64': '@scrollback/win32-arm64',
  'win32 x64': '@scrollback/win32-x64',
};

function fail(message) {
  process.stderr.write('scrollback (npm): ' + message + '\n');
  process.exit(1);
}

function binaryPath() {
  // For testing a build that is not installed: the binary to run.
  if (process.env.SCROLLBACK_BINARY) {
    return process.env.SCROLLBACK_BINARY;
  }
  const platform = process.platform + ' ' + process.arch;
  const pkg = packages[platform];
  if (!pkg) {
    fail('there is no prebuilt binary for ' + platform + ' (there are: ' + Object.keys(packages).join(', ') +
      '); install from source instead: CGO_ENABLED=0 go install github.com/scrollback-dev/scrollback/cmd/scrollback@latest');
  }
  const exe = process.platform === 'win32' ? 'scrollback.exe' : 'scrollback';
  try {
    return require.resolve(pkg + '/bin/' + exe);
  } catch (e) {
    fail('the package ' + pkg + ', which holds the binary for ' + platform + ', is not installed. ' +
      'npm installs it as an optional dependency of scrollback: install again without --omit=optional ' +
      '(or --no-optional), e.g. npm install scrollback, or npx -y scrollback@latest');
  }
}

const child = spawn(binaryPath(), process.argv.slice(2), { stdio: 'inherit', windowsHide: true });

const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'].filter((s) => process.platform !== 'win32' || s === 'SIGINT');
const handlers = {};
for (const sig of forwarded) {
  handlers[sig] = () => {
    try {
      child.kill(sig);
    } catch (e) {
      // it has ended already
    }
  };
  process.on(sig, handlers[sig]);
}

child.on('error', (err) => fail('cannot run ' + child.spawnfile + ': ' + err.message));

child.on('exit', (code, signal) => {
  if (signal) {
    // End the same way, so that a parent sees the signal, not a status.
    for (const sig of forwarded) {
      process.removeListener(sig, handlers[sig]);
    }
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code === null ? 1 : code);
});
