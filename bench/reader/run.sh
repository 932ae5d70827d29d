#!/bin/sh
# Benchmark: `scrollback read` as a whole process (start, open the database,
# look the copy up, read one 4 KiB page, print it) on an 8 MiB copy.
# Target: at most 20 ms. The reference, measured in the same run, is the
# same binary doing nothing useful (`scrollback version`): what any Go
# program pays to start.
#
# Prints the median and p90 of $RUNS runs (default 200) at random offsets.
set -eu
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-200}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/scrollback" ./cmd/scrollback
export SCROLLBACK_DB="$dir/bench.db"
awk 'BEGIN { for (i = 1; i <= 120000; i++) printf "%09d the quick brown fox jumps over the lazy dog - row %d\n", i, i }' | head -c 8388608 >"$dir/copy.txt"
id=$("$dir/scrollback" run --json -- cat "$dir/copy.txt" | sed -n 's/.*"output_id": "\([^"]*\)".*/\1/p')
[ -n "$id" ] || { echo "no output_id" >&2; exit 1; }

# timeit NAME CMD...: run CMD $RUNS times; print median and p90 in ms
timeit() {
	name=$1; shift
	i=0
	: >"$dir/t"
	while [ $i -lt "$RUNS" ]; do
		s=$(date +%s%N)
		"$@" >/dev/null
		e=$(date +%s%N)
		echo $(((e - s) / 1000)) >>"$dir/t"
		i=$((i + 1))
	done
	sort -n "$dir/t" | awk -v name="$name" '{ a[NR] = $1 } END { printf "%-28s median %6.2f ms   p90 %6.2f ms\n", name, a[int(NR/2)+1]/1000, a[int(NR*0.9)]/1000 }'
}

off=$(( $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') * 100 ))
timeit "scrollback version" "$dir/scrollback" version
timeit "scrollback read (4 KiB)" "$dir/scrollback" read --offset 0 "$id"
timeit "scrollback read --offset" "$dir/scrollback" read --offset "$off" "$id"
