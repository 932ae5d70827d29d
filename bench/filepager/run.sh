#!/bin/sh
# Benchmark of read_file on a large file (spec item 6):
#   1. `scrollback file F --line 10000000` with no line index, against `wc -l F`
#      on the same file (page cache warm for both): the ratio must be <= 1.5;
#   2. the next page, in a new process, with the index the first run left on
#      disk: must take <= 5 ms.
#
# F is ~1.4 GB, 14 million lines of 100 bytes, made in $BENCH_DIR (default: a
# temporary directory, removed afterwards). $SCROLLBACK is the binary to time;
# by default the stand-in in bench/filepager/cmd is built and used. Each
# figure is the best of $RUNS runs (default 3).
set -eu

cd "$(dirname "$0")/../.."
RUNS=${RUNS:-3}
LINES=${LINES:-14000000}
WIDTH=${WIDTH:-100}
LINE=${LINE:-10000000}

if [ -n "${BENCH_DIR:-}" ]; then
	mkdir -p "$BENCH_DIR"
	work=$BENCH_DIR
else
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi

helper=$work/filepager-bench
go build -o "$helper" ./bench/filepager/cmd
bin=${SCROLLBACK:-$helper}
F=$work/big.txt
export SCROLLBACK_INDEX_DIR=$work/index
# scrollback keeps its line index under $XDG_CACHE_HOME/scrollback/lineindex.
export XDG_CACHE_HOME=$work/cache

if [ ! -f "$F" ] || [ "$(wc -c <"$F")" -ne $((LINES * WIDTH)) ]; then
	echo "generating $F ($LINES lines of $WIDTH bytes)..."
	"$helper" gen "$F" "$LINES" "$WIDTH"
fi
cat "$F" >/dev/null # into the page cache

# best CMD...: the best wall time in ns over $RUNS runs, timed by the helper
# itself (an exec from Go, not date(1) around a shell's fork); with cold=1
# the line index is removed before each run.
best() {
	if [ -n "${cold:-}" ]; then
		"$helper" time "$RUNS" --clean "$SCROLLBACK_INDEX_DIR" --clean "$XDG_CACHE_HOME" -- "$@"
	else
		"$helper" time "$RUNS" -- "$@"
	fi
}
ms() { awk -v ns="$1" 'BEGIN { printf "%.1f ms", ns / 1e6 }'; }

wc_ns=$(best wc -l "$F")
cold=1
far_ns=$(best "$bin" file "$F" --line "$LINE")
cold=

# The first page again, to learn where the next one starts (index now warm).
first=$("$bin" file "$F" --line "$LINE" --json)
next_line=$(printf '%s' "$first" | grep -o '"nextLine": *[0-9]*' | tail -n 1 | tr -dc 0-9)
next_off=$(printf '%s' "$first" | grep -o '"nextByteOffset": *[0-9]*' | tail -n 1 | tr -dc 0-9)
next_ns=$(best "$bin" file "$F" --line "$next_line")
next_off_ns=$(best "$bin" file "$F" --byte-offset "$next_off")
# A process that does nothing useful, to show what start-up alone costs,
# and what an exec of any program costs here.
noop_ns=$(best "$bin" file "$F" --line 1)
true_ns=$(best /bin/true)

echo "file: $F ($(wc -c <"$F") bytes, $LINES lines); binary: $bin; best of $RUNS"
echo "wc -l:                           $(ms "$wc_ns")"
echo "file --line $LINE (no index): $(ms "$far_ns")"
awk -v a="$far_ns" -v b="$wc_ns" 'BEGIN { printf "ratio to wc -l:                  %.2fx (limit 1.5x)\n", a / b }'
echo "next page --line $next_line:     $(ms "$next_ns") (limit 5 ms)"
echo "next page --byte-offset $next_off: $(ms "$next_off_ns")"
echo "first page --line 1 (start-up):  $(ms "$noop_ns")"
echo "/bin/true (an exec alone):       $(ms "$true_ns")"
