#!/usr/bin/env bash
# Side-by-side wall time and peak memory of the audit log's commands and the
# floor for each on a 1,000,000-entry log (issue 21): `vigil audit verify`
# against sha256sum of the file (goal <= 1.5x), and `vigil audit show --task
# X` / `--event E` against grep -F of the same needle (goal <= 2x). Runs are
# interleaved (floor, vigil, floor, vigil, ...) so that machine load hits
# both alike; medians are shown.
# The log is generated once (bench/genaudit: valid chain, head beside it)
# and kept under bench/out/audit/, which git ignores.
# Usage: bench/audit.sh [VIGIL_BIN] [RUNS] [ENTRIES]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VIGIL=$(realpath "${1:-$ROOT/vigil}")
RUNS=${2:-7}
ENTRIES=${3:-1000000}
[ -x "$VIGIL" ] || { echo "no vigil binary at $VIGIL (go build -o vigil .)" >&2; exit 2; }
HOME_DIR=$ROOT/bench/out/audit-$ENTRIES
LOG=$HOME_DIR/audit.log
if [ ! -s "$LOG" ]; then
  echo "generating $ENTRIES entries into $LOG (once)" >&2
  (cd "$ROOT" && go run ./bench/genaudit -n "$ENTRIES" -o "$LOG")
fi
export VIGIL_HOME=$HOME_DIR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run FILE CMD...: one run; appends "wall_seconds max_rss_kb" to FILE. Output
# goes through a pipe (as to a reader), not to /dev/null, which grep detects
# and then stops at the first match. Wall time comes from bash's microsecond
# clock (time(1) rounds to 10 ms).
run() {
  local out=$1 t0 t1
  shift
  t0=$EPOCHREALTIME
  /usr/bin/time -o "$tmp/t" -f "%M" "$@" | cat >/dev/null
  t1=$EPOCHREALTIME
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}') $(cat "$tmp/t")" >>"$out"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# compare NAME TARGET FLOOR_CMD -- VIGIL_ARGS: prints medians and the ratio.
compare() {
  local name=$1 target=$2
  shift 2
  local floor=() vig=()
  while [ "$1" != "--" ]; do floor+=("$1"); shift; done
  shift
  vig=("$@")
  : >"$tmp/floor" && : >"$tmp/vig"
  for _ in $(seq "$RUNS"); do
    run "$tmp/floor" "${floor[@]}"
    run "$tmp/vig" "$VIGIL" "${vig[@]}"
  done
  local f v m
  f=$(cut -d' ' -f1 "$tmp/floor" | median)
  v=$(cut -d' ' -f1 "$tmp/vig" | median)
  m=$(cut -d' ' -f2 "$tmp/vig" | sort -n | tail -1)
  printf '%-30s floor %-10s %7.3fs  vigil %7.3fs  ratio %5.2f (goal %s)  vigil peak %d MB\n' \
    "$name" "${floor[0]}" "$f" "$v" "$(awk -v a="$v" -v b="$f" 'BEGIN {print (b > 0) ? a / b : 0}')" "$target" "$((m / 1024))"
}

# the same answers, or the timing means nothing
want=$(grep -cF '"task_id":"task-0123456"' "$LOG")
got=$("$VIGIL" audit show --task task-0123456 --json | wc -l)
[ "$want" = "$got" ] || { echo "show --task printed $got lines, grep finds $want" >&2; exit 1; }
"$VIGIL" audit verify >/dev/null || { echo "the generated log does not verify" >&2; exit 1; }
cat "$LOG" >/dev/null # warm the page cache

echo "audit log: $ENTRIES entries, $(($(stat -c %s "$LOG") / 1048576)) MB, $RUNS runs each"
compare 'audit verify' '<= 1.5' sha256sum "$LOG" -- audit verify
compare 'audit show --task X --json' '<= 2' grep -F '"task_id":"task-0123456"' "$LOG" -- \
  audit show --task task-0123456 --json
compare 'audit show --task X' '<= 2' grep -F '"task_id":"task-0123456"' "$LOG" -- \
  audit show --task task-0123456
compare 'audit show --event E --json' '<= 2' grep -F '"event":"denied"' "$LOG" -- \
  audit show --event denied --json
