#!/bin/sh
# Benchmark: capturing a large command output through the command people
# run, `scrollback run`, must cost little wall time and bounded memory.
#
# Each case runs its command three ways, interleaved round by round (so that
# the load of the shared machine falls on all three alike), $RUNS rounds:
#   pipe:    sh -c 'CMD' | cat >/dev/null          the reference
#   run:     scrollback run -- 'CMD' >/dev/null     the real binary, saving
#            the retained copy into its own SQLite database ($dir/bench.db)
#   inproc:  bench/capture/cmd 'CMD'                runner + capture in one
#            process, no store: what this benchmark measured before
#   ref:     $SCROLLBACK_REF run -- 'CMD' >/dev/null, when SCROLLBACK_REF
#            names another build (main's, say), saving into its own
#            database ($dir/ref.db): the same rounds measure both builds
# and prints, per case, the best and the median wall time of each, the
# ratios run/pipe and inproc/pipe (best and median), and the peak RSS.
# Cases: text (a generated log, cat FILE), random bytes (cat FILE), seq
# (seq 1 12000000), each about 100 MiB; and text of 1 GiB.
# Targets: run/pipe <= 1.5; run's peak RSS <= 64 MiB, the same at 100 MiB
# and 1 GiB.
#
#   sh bench/capture/run.sh                 # builds ./cmd/scrollback (CGO_ENABLED=0)
#   SCROLLBACK=/path/to/scrollback sh bench/capture/run.sh
#   RUNS=11 CASES='text seq' sh bench/capture/run.sh
#   SCROLLBACK_REF=/tmp/main/scrollback sh bench/capture/run.sh   # new vs main
#
# Files go to $BENCH_DIR (kept) or a temporary directory (removed).
set -eu

cd "$(dirname "$0")/../.."
RUNS=${RUNS:-7}
CASES=${CASES:-text random seq text-1G}
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
if [ -z "${SCROLLBACK:-}" ]; then
	CGO_ENABLED=0 go build -o "$dir/scrollback" ./cmd/scrollback
	SCROLLBACK=$dir/scrollback
fi
export SCROLLBACK_DB="$dir/bench.db"
"$SCROLLBACK" run -- true >/dev/null # the database exists, as a user's does
ways="pipe run inproc"
if [ -n "${SCROLLBACK_REF:-}" ]; then
	ways="pipe run inproc ref"
	SCROLLBACK_DB="$dir/ref.db" "$SCROLLBACK_REF" run -- true >/dev/null
fi

# once NAME CMD...: run CMD once, append "NAME ms rss_kib" to $dir/times
once() {
	name=$1
	shift
	t0=$(date +%s%N)
	/usr/bin/time -f '%M' -o "$dir/rss" "$@" >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; exit 1; }
	t1=$(date +%s%N)
	echo "$name $(((t1 - t0) / 1000000)) $(tail -n 1 "$dir/rss")" >>"$dir/times"
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
printf '%-9s %-7s %9s %9s %9s %9s %9s\n' case what best_ms p50_ms best_x p50_x rss_MiB
for c in $CASES; do
	case $c in
	text) f=$dir/text-100M.txt; gen "$f" 104857600; cmd="cat '$f'" ;;
	text-1G) f=$dir/text-1G.txt; gen "$f" 1073741824; cmd="cat '$f'" ;;
	random) f=$dir/random-100M.bin; [ -f "$f" ] || head -c 104857600 /dev/urandom >"$f"; cmd="cat '$f'" ;;
	seq) cmd="seq 1 12000000" ;;
	*) echo "unknown case $c" >&2; exit 2 ;;
	esac
	: >"$dir/times"
	i=0
	while [ $i -lt "$RUNS" ]; do
		once pipe sh -c "$cmd | cat >/dev/null"
		once run "$SCROLLBACK" run -- "$cmd"
		once inproc "$dir/capbench" "$cmd"
		if [ -n "${SCROLLBACK_REF:-}" ]; then
			SCROLLBACK_DB=$dir/ref.db
			once ref "$SCROLLBACK_REF" run -- "$cmd"
			SCROLLBACK_DB=$dir/bench.db
		fi
		i=$((i + 1))
	done
	# best and median per way, and the ratios to the pipe's
	for w in $ways; do
		grep "^$w " "$dir/times" | sort -k2 -n | awk -v w="$w" '
			{ ms[NR] = $2; if ($3 > rss) rss = $3 }
			END { printf "%s %d %d %.1f\n", w, ms[1], ms[int((NR + 1) / 2)], rss / 1024 }'
	done >"$dir/summary"
	awk -v c="$c" '
		{ best[$1] = $2; p50[$1] = $3; rss[$1] = $4; order[NR] = $1 }
		END {
			for (i = 1; i <= NR; i++) {
				w = order[i]
				bx = best["pipe"] > 0 ? best[w] / best["pipe"] : 0
				px = p50["pipe"] > 0 ? p50[w] / p50["pipe"] : 0
				printf "%-9s %-7s %9d %9d %9.2f %9.2f %9.1f\n", c, w, best[w], p50[w], bx, px, rss[w]
			}
		}' "$dir/summary"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
