#!/bin/sh
# Checks the npm packages as a user gets them: builds this machine's
# platform package (go build) and the launcher (npm/build.mjs), packs both
# with `npm pack`, installs the two tarballs into an empty project with no
# registry (--offline: the other platforms' optional packages are skipped,
# as npm skips them on a machine they do not fit), then runs `npx
# scrollback version` and checks the version, and that an exit status and
# signals pass through the launcher.
set -eu
cd "$(dirname "$0")/.."

for tool in node npm npx go; do
	command -v "$tool" >/dev/null 2>&1 || { echo "npm-check: $tool is needed (Node.js 18 or later, Go 1.26)" >&2; exit 1; }
done

version=0.0.0-check.1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
platform=$(node -p 'process.platform + "-" + process.arch')

node npm/build.mjs --go --platform host --version "$version" --out "$tmp/out"
mkdir "$tmp/tgz" "$tmp/app"
(cd "$tmp/out/scrollback" && npm pack --silent --pack-destination "$tmp/tgz" >/dev/null)
(cd "$tmp/out/$platform" && npm pack --silent --pack-destination "$tmp/tgz" >/dev/null)
ls "$tmp/tgz"

cd "$tmp/app"
printf '{"name":"npm-check","version":"1.0.0","private":true}\n' >package.json
npm install --offline --no-audit --no-fund --loglevel=error "$tmp"/tgz/*.tgz

got=$(npx --offline --no-install scrollback version)
echo "npx scrollback version: $got"
case $got in
*"$version"*) ;;
*) echo "npm-check: npx scrollback version printed no $version" >&2; exit 1 ;;
esac

status=0
npx --offline --no-install scrollback run -- "exit 3" >/dev/null 2>&1 || status=$?
if [ "$status" != 3 ]; then
	echo "npm-check: scrollback run -- 'exit 3' through the launcher exited $status, want 3" >&2
	exit 1
fi
# Signals, where there are POSIX signals: one that ends the binary ends the
# launcher the same way, and one sent to the launcher reaches the binary.
case $(uname -s) in
MINGW* | MSYS* | CYGWIN*) echo "npm-check: signals not checked on Windows" ;;
*)
	launcher=node_modules/scrollback/bin/scrollback.js
	status=0
	SCROLLBACK_BINARY=/bin/sh node "$launcher" -c 'kill -TERM $$' || status=$?
	[ "$status" = 143 ] || { echo "npm-check: a binary ended by SIGTERM left the launcher with status $status, want 143 (SIGTERM)" >&2; exit 1; }
	SCROLLBACK_BINARY=/bin/sh node "$launcher" -c 'trap "exit 7" TERM; sleep 30 & wait' &
	pid=$!
	sleep 2
	kill -TERM "$pid"
	status=0
	wait "$pid" || status=$?
	[ "$status" = 7 ] || { echo "npm-check: SIGTERM to the launcher: the binary's handler did not run (status $status, want 7)" >&2; exit 1; }
	;;
esac

echo "npm-check: ok (scrollback@$version and @scrollback/$platform from their tarballs)"
