#!/usr/bin/env bash
# Side-by-side wall time and peak memory of `vigil search` and raw rg over
# the Go source tree (issue 3, Speed). Usage: bench/search.sh [VIGIL_BIN] [RUNS]
set -euo pipefail
VIGIL=${1:-./vigil}
RUNS=${2:-5}
SRC=$(go env GOROOT)/src
cd "$SRC"
# Best-of-N wall seconds and max RSS (KB) of a command, output discarded.
measure() {
  local best=999 rss=0 t m
  for _ in $(seq "$RUNS"); do
    read -r t m < <( { /usr/bin/time -f "%e %M" "$@" >/dev/null 2>/dev/null; } 2>&1 | tail -1)
    best=$(echo "$t $best" | awk '{print ($1<$2)?$1:$2}')
    rss=$(( m > rss ? m : rss ))
  done
  printf '%-8s %6.0f MB  %s\n' "$best" "$((rss/1024))" "$*"
}
"$VIGIL" search --max-results 1 x . >/dev/null 2>&1 || true # warm the cache
echo "== selective: func \\w+Context\\( (target: vigil <= 1.3x rg --json)"
measure rg --json 'func \w+Context\('
measure "$VIGIL" search --case sensitive --max-files 100000 'func \w+Context\(' .
echo "== dense, default max_results (target: vigil <= 0.5x rg --json --sort path)"
measure rg --json --sort path err
measure "$VIGIL" search --case sensitive --max-files 100000 err .
echo "== dense, all results (target: vigil <= 1.5x rg --json)"
measure rg --json err
measure "$VIGIL" search --case sensitive --max-files 100000 --max-results 1000000 err .
