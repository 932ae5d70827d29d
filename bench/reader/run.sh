#!/bin/sh
# Benchmark: `scrollback read` as a whole process (start, open the database,
# look the copy up, read one 4 KiB page, print it) on an 8 MiB copy.
# Target: at most 20 ms. The reference, measured in the same run, is the
# same binary doing nothing useful (`scrollback version`): what any Go
# program pays to start.
#
# Prints the best of $RUNS runs (default 50), each timed from Go (an exec,
# no shell or date(1) around it) by bench/filepager/cmd's time subcommand.
set -eu
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-50}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
CGO_ENABLED=0 go build -o "$dir/scrollback" ./cmd/scrollback
go build -o "$dir/timer" ./bench/filepager/cmd
export SCROLLBACK_DB="$dir/bench.db"
awk 'BEGIN { for (i = 1; i <= 120000; i++) printf "%09d the quick brown fox jumps over the lazy dog - row %d\n", i, i }' | head -c 8388608 >"$dir/copy.txt"
id=$("$dir/scrollback" run --json -- cat "$dir/copy.txt" | sed -n 's/.*"output_id": "\([^"]*\)".*/\1/p')
[ -n "$id" ] || { echo "no output_id" >&2; exit 1; }

# timeit NAME CMD...: the best wall time of $RUNS runs of CMD, in ms.
timeit() {
	name=$1
	shift
	ns=$("$dir/timer" time "$RUNS" -- "$@")
	awk -v name="$name" -v ns="$ns" 'BEGIN { printf "%-28s best %6.2f ms\n", name, ns / 1e6 }'
}

off=$(( $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') * 100 ))
timeit "/bin/true (an exec alone)" /bin/true
timeit "scrollback version" "$dir/scrollback" version
timeit "scrollback read (4 KiB)" "$dir/scrollback" read --offset 0 "$id"
timeit "scrollback read --offset" "$dir/scrollback" read --offset "$off" "$id"
