#!/bin/sh
# Benchmark: capturing a large command output must cost little wall time
# and bounded memory.
#
# For a 100 MiB and a 1 GiB text file F, compare
#   baseline:  sh -c 'cat F | cat >/dev/null'
#   capture:   cat F run through runner + capture (bench/capture/cmd), or
#              "$SCROLLBACK run -- cat F >/dev/null" when $SCROLLBACK is set
# and print the wall-time ratio (best of $RUNS) and the peak RSS of each.
# Targets: ratio <= 1.5; capture peak RSS <= 64 MiB and the same for both
# sizes.
#
# Files go to $BENCH_DIR (kept) or a temporary directory (removed).
set -eu

cd "$(dirname "$0")/../.."
RUNS=${RUNS:-7}
if [ -n "${BENCH_DIR:-}" ]; then
	dir=$BENCH_DIR
	mkdir -p "$dir"
else
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
fi

gen() { # gen FILE BYTES: text lines, ending with a summary line
	[ -f "$1" ] && [ "$(wc -c <"$1")" -eq "$2" ] && return
	awk 'BEGIN { for (i = 1; i <= 12000; i++) printf "%09d the quick brown fox jumps over the lazy dog, row %d of the block\n", i, i }' >"$dir/block"
	n=$(($2 / $(wc -c <"$dir/block") + 1))
	i=0
	while [ $i -lt $n ]; do cat "$dir/block"; i=$((i + 1)); done | head -c $(($2 - 22)) >"$1"
	printf '\nTOTAL: end of export\n' >>"$1"
}

go build -o "$dir/capbench" ./bench/capture/cmd

# measure NAME CMD...: best wall time in ms and the peak RSS in KiB over $RUNS runs
measure() {
	best=0 rss=0
	i=0
	while [ $i -lt "$RUNS" ]; do
		t0=$(date +%s%N)
		/usr/bin/time -f '%M' -o "$dir/rss" "$@" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; exit 1; }
		t1=$(date +%s%N)
		ms=$(((t1 - t0) / 1000000))
		r=$(tail -n 1 "$dir/rss")
		if [ $best -eq 0 ] || [ $ms -lt $best ]; then best=$ms; fi
		if [ "$r" -gt $rss ]; then rss=$r; fi
		i=$((i + 1))
	done
}

printf '%-6s %12s %12s %8s %14s %14s\n' size base_ms ours_ms ratio base_rss_MiB ours_rss_MiB
for spec in 100M:104857600 1G:1073741824; do
	name=${spec%%:*} size=${spec#*:}
	f=$dir/out-$name.txt
	gen "$f" "$size"
	measure sh -c "cat '$f' | cat >/dev/null"
	bms=$best brss=$rss
	if [ -n "${SCROLLBACK:-}" ]; then
		measure "$SCROLLBACK" run -- cat "$f"
	else
		measure "$dir/capbench" "cat '$f'"
	fi
	oms=$best orss=$rss
	printf '%-6s %12d %12d %8s %14s %14s\n' "$name" "$bms" "$oms" \
		"$(awk "BEGIN { printf \"%.2f\", $oms / ($bms > 0 ? $bms : 1) }")" \
		"$(awk "BEGIN { printf \"%.1f\", $brss / 1024 }")" \
		"$(awk "BEGIN { printf \"%.1f\", $orss / 1024 }")"
	if [ -z "${SCROLLBACK:-}" ]; then sed 's/^/  /' "$dir/err"; fi
done
