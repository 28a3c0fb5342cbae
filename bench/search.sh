#!/usr/bin/env bash
# Side-by-side wall time and peak memory of `vigil search` and raw rg over
# the Go source tree (issue 3, Speed). Runs are interleaved (raw, vigil,
# raw, vigil, ...) so that machine load hits both alike; medians are shown.
# Usage: bench/search.sh [VIGIL_BIN] [RUNS] [BACKENDS]   (BACKENDS: "auto rg")
set -euo pipefail
VIGIL=$(realpath "${1:-./vigil}")
RUNS=${2:-7}
BACKENDS=${3:-auto rg}
SRC=$(go env GOROOT)/src
[ -x "$VIGIL" ] || { echo "no vigil binary at $VIGIL (go build -o vigil .)" >&2; exit 2; }
cd "$SRC"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The tree has more files than the default max_files hard cap (10,000).
export VIGIL_HOME=$tmp/home
mkdir -p "$VIGIL_HOME"
printf '[tools.search]\nmax_files = 100000\n' >"$VIGIL_HOME/config.toml"

# run FILE CMD...: one run; appends "wall_seconds max_rss_kb" to FILE. Output
# goes through a pipe (as to a reader), not to /dev/null, which some tools
# detect and then skip work. Wall time comes from bash's microsecond clock
# (time(1) rounds to 10 ms).
run() {
  local out=$1 t0 t1
  shift
  t0=$EPOCHREALTIME
  /usr/bin/time -o "$tmp/t" -f "%M" "$@" | cat >/dev/null
  t1=$EPOCHREALTIME
  echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f", b - a}') $(cat "$tmp/t")" >>"$out"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# compare NAME TARGET RAW_CMD -- VIGIL_ARGS: prints medians and the ratio.
compare() {
  local name=$1 target=$2
  shift 2
  local raw=() vig=()
  while [ "$1" != "--" ]; do raw+=("$1"); shift; done
  shift
  vig=("$@")
  for be in $BACKENDS; do
    : >"$tmp/raw" && : >"$tmp/vig"
    for _ in $(seq "$RUNS"); do
      run "$tmp/raw" "${raw[@]}"
      run "$tmp/vig" "$VIGIL" search --backend "$be" "${vig[@]}"
    done
    local r v m
    r=$(cut -d' ' -f1 "$tmp/raw" | median)
    v=$(cut -d' ' -f1 "$tmp/vig" | median)
    m=$(cut -d' ' -f2 "$tmp/vig" | sort -n | tail -1)
    printf '%-34s backend=%-5s raw %6.4fs  vigil %6.4fs  ratio %5.2f (target %s)  vigil peak %d MB\n' \
      "$name" "$be" "$r" "$v" "$(awk -v a="$v" -v b="$r" 'BEGIN {print (b > 0) ? a / b : 0}')" "$target" "$((m / 1024))"
  done
}

# reference NAME CMD...: the median wall time of another raw command, to
# show what a backend costs by itself (ugrep walking the tree alone).
reference() {
  local name=$1
  shift
  : >"$tmp/ref"
  for _ in $(seq "$RUNS"); do run "$tmp/ref" "$@"; done
  printf '%-34s reference: %s  %6.4fs\n' "$name" "$*" "$(cut -d' ' -f1 "$tmp/ref" | median)"
}

"$VIGIL" search --max-results 1 x . >/dev/null 2>&1 || true # warm the page cache
rg --json err >/dev/null || true
compare 'selective func \w+Context\(' '<= 1.3' rg --json 'func \w+Context\(' -- \
  --case sensitive --max-files 100000 'func \w+Context\(' .
compare 'dense err, max_results 200' '<= 0.5' rg --json --sort path err -- \
  --case sensitive --max-files 100000 err .
compare 'dense err, max_results 1000000' '<= 1.5' rg --json err -- \
  --case sensitive --max-files 100000 --max-results 1000000 err .
case " $BACKENDS " in
*" auto "* | *" ugrep "*)
  # What ugrep costs by itself, walking the tree with its own output format.
  fmt='--format={"f":%h,"n":%n,"b":%b,"d":%d}%~'
  reference 'selective, raw ugrep -r' ugrep -r -u -H "$fmt" 'func \w+Context\(' .
  reference 'dense err, raw ugrep -r' ugrep -r -u -H "$fmt" err .
  ;;
esac
