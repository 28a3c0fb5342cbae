#!/usr/bin/env bash
# Issue 18's hostile case: 31 files, each one line of 1,999,999 bytes of "a"
# (2,000,000 with its line end: just within the default max_file_size_bytes),
# searched for "aaaa". Prints, for each backend and for the walk (`vigil
# search`) and the ordered path (`--stream`), the JSON output's size, wall
# time and peak RSS (/usr/bin/time -v's "Maximum resident set size").
# Usage: bench/longlines.sh [VIGIL_BIN] [BACKENDS]   (BACKENDS: "ugrep rg")
set -euo pipefail
VIGIL=$(realpath "${1:-./vigil}")
BACKENDS=${2:-ugrep rg}
[ -x "$VIGIL" ] || { echo "no vigil binary at $VIGIL (go build -o vigil .)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tree" "$tmp/home"
line=$(head -c 1999999 /dev/zero | tr '\0' a)
for i in $(seq -w 0 30); do printf '%s\n' "$line" >"$tmp/tree/f$i.txt"; done
export VIGIL_HOME=$tmp/home
cd "$tmp"
printf '%-6s %-8s %12s %8s %10s %s\n' backend path json_bytes wall_s rss_kb note
for be in $BACKENDS; do
  for mode in walk stream; do
    flag=()
    [ "$mode" = stream ] && flag=(--stream)
    # A generous timeout: a loaded machine must not turn the case into a
    # partial answer.
    /usr/bin/time -v -o "$tmp/time" "$VIGIL" search "${flag[@]}" --timeout-ms 600000 --backend "$be" aaaa tree >"$tmp/out.json"
    rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time")
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$tmp/time")
    note=$(tail -c 400 "$tmp/out.json" | grep -o '"timed_out":true' || true)
    printf '%-6s %-8s %12s %8s %10s %s\n' "$be" "$mode" "$(stat -c %s "$tmp/out.json")" "$wall" "$rss" "$note"
  done
done
