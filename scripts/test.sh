#!/usr/bin/env bash
# The whole test suite, set-up included, on a fresh machine or a warm one:
#   1. Go modules;
#   2. the npm packages of the real-client end-to-end tests (e2e/);
#   3. a throwaway PostgreSQL server for the PostgreSQL backend's tests,
#      and Debian's chromium for the eval report's browser test;
#   4. gofmt and go vet, and the cross-build for the six release targets
#      (scripts/cross.sh: go vet and go build for each, then GoReleaser's
#      check and snapshot build when GoReleaser is installed);
#   5. go test: -race on the engine packages, plainly on the rest;
#   6. a short run of every fuzz target (FUZZTIME, default 10s each);
#   7. the npm packages, packed and run from their tarballs
#      (scripts/npm-check.sh).
# Benchmarks are not run here: see bench/README.md.
#
# It runs on Linux and macOS (bash 3.2 or later: no bash-4 features) with
# Go 1.26, Node.js 20 and PostgreSQL 15 or later, and needs root only to
# install what is missing (Debian's postgresql and chromium, with apt-get);
# without root, what cannot be installed is said and its tests are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n=== %s\n' "$*"; }

step "go modules"
go mod download

if [ -f e2e/package-lock.json ]; then
	step "npm packages for the end-to-end tests (e2e/)"
	command -v npm >/dev/null || { echo "npm is needed for the real-client tests: install Node.js 20+" >&2; exit 1; }
	npm ci --prefix e2e --no-audit --no-fund --loglevel=error
fi

if [ -x .ci/postgres.sh ] && [ -z "${SCROLLBACK_TEST_POSTGRES:-}" ] && [ -z "${SCROLLBACK_SKIP_POSTGRES:-}" ]; then
	step "PostgreSQL for the PostgreSQL backend's tests"
	pgstatus=0
	pgenv=$(.ci/postgres.sh) || pgstatus=$?
	if [ "$pgstatus" = 3 ]; then
		echo "note: no PostgreSQL here and we cannot install it (see above): the PostgreSQL backend's tests will be skipped" >&2
		# Said, so done: without it those tests fail, by design, so that a
		# run cannot pass by skipping them unawares (store/postgres/pgtest).
		export SCROLLBACK_SKIP_POSTGRES=1
	elif [ "$pgstatus" != 0 ]; then
		echo "could not start PostgreSQL for the tests (see above); set SCROLLBACK_SKIP_POSTGRES=1 to run without them" >&2
		exit 1
	else
		eval "$pgenv"
		export SCROLLBACK_TEST_POSTGRES
	fi
fi

if ! command -v chromium >/dev/null && [ -z "${SCROLLBACK_SKIP_CHROMIUM:-}" ]; then
	# The eval report's page is checked in a real browser (eval's
	# TestHTMLInChromium): Debian's chromium, headless.
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		step "installing Chromium (Debian's chromium) for the eval report's browser test"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >/dev/null
		apt-get install -y -qq --no-install-recommends chromium >/dev/null
	else
		echo "note: chromium is not installed and we cannot install it: the eval report's browser test will be skipped" >&2
	fi
fi
if command -v chromium >/dev/null; then
	export SCROLLBACK_REQUIRE_CHROMIUM=1
fi

if ! command -v curl >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	# The eval suite's sealed scenarios fetch their one-shot outputs with curl.
	step "curl for the eval suite's sealed scenarios"
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends curl >/dev/null
fi

step "gofmt and go vet"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './e2e/node_modules/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change these files; run gofmt -w on them:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go vet ./...

step "cross-build: linux, darwin, windows x amd64, arm64 (scripts/cross.sh)"
./scripts/cross.sh

# The engine packages slice bytes and share state across goroutines: they
# run under the race detector.
engine_pkgs=". ./preview/... ./capture/... ./runner/... ./internal/procgroup/... ./store/... ./filepager/... ./internal/utf8x/... ./grep/... ./jsonq/..."
engine_list=$(go list $engine_pkgs 2>/dev/null)
other_list=$(go list ./... | grep -vxF "$engine_list" || true)

step "go test -race (engine packages)"
go test -race -count=1 $engine_list

# Code Mode's workers under the race detector are stopped by the server's
# watch before their own (its shadow memory inflates them), so the tests
# that check a memory stop's line run once more without it.
step "go test (Code Mode through workers, without the race detector)"
go test -count=1 -run 'TestRunCode|TestCodeCorpus' .

if [ -n "$other_list" ]; then
	step "go test (front ends and end-to-end)"
	go test -count=1 $other_list
fi

step "fuzz targets, ${FUZZTIME:=10s} each"
while IFS= read -r file; do
	dir=$(dirname "$file")
	for fn in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)' "$file" | awk '{print $2}'); do
		echo "--- $fn ($dir)"
		log=$(mktemp)
		if ! go test -run='^$' -fuzz="^${fn}\$" -fuzztime="$FUZZTIME" "./$dir" >"$log" 2>&1; then
			# The fuzzing coordinator can itself time out when the budget ends
			# during a slow input ("context deadline exceeded", no input
			# written): that is the tool's failure, not the code's. Anything
			# else, above all a written failing input, fails the run.
			if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
				echo "    (the fuzzing engine timed out at the end of its budget; no failing input was found)"
			else
				cat "$log" >&2
				echo "fuzz target $fn in ./$dir failed; the failing input is under ./$dir/testdata/fuzz/$fn" >&2
				exit 1
			fi
		fi
		rm -f "$log"
	done
done < <(git ls-files '*_test.go' 2>/dev/null | xargs grep -l '^func Fuzz' | sort)

if [ -z "${SCROLLBACK_SKIP_NPM:-}" ]; then
	step "npm packages: pack, install from the tarballs, run (scripts/npm-check.sh)"
	./scripts/npm-check.sh
fi

step "all tests passed"
