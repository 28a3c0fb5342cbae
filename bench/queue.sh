#!/usr/bin/env bash
# Queue commands with a long task history (issue 21, Scale): `submit`,
# `preview`, `approve` and `pending` in a home with 100 pending and 100,000
# finished tasks, against the same home with 100 finished (goal: <= 1.2x).
# Runs are interleaved (small, big, small, big, ...) so that machine load
# hits both alike; medians are shown. The finished tasks are written by
# bench/queuegen (real leases, manifests, signed results and a chained audit
# log that `vigil audit verify` accepts); the pending ones go through the
# inbox and `vigil pending`, as an agent's would.
# Usage: bench/queue.sh [VIGIL_BIN] [RUNS] [FINISHED]
set -euo pipefail
cd "$(dirname "$0")/.."
VIGIL=$(realpath "${1:-./vigil}")
RUNS=${2:-9}
BIG=${3:-100000}
SMALL=100
PENDING=100
[ -x "$VIGIL" ] || { echo "no vigil binary at $VIGIL (go build -o vigil .)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/queuegen" ./bench/queuegen

# mkhome NAME FINISHED: keys, a sim device, FINISHED finished tasks, PENDING
# pending ones, and RUNS manifests to submit.
mkhome() {
  local h=$tmp/$1 t0
  mkdir -p "$h"
  printf '[[leases.keys]]\nkid = "local"\nalg = "EdDSA"\npublic_key = "keys/issuer.pub.pem"\n\n[[devices]]\nid = "living-room"\ndriver = "sim"\n' >"$h/config.toml"
  "$VIGIL" --home "$h" keys init >/dev/null 2>&1
  t0=$EPOCHREALTIME
  "$tmp/queuegen" finished "$h" "$2"
  printf '%-6s %7d finished tasks written in %.1fs\n' "$1" "$2" "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {print b - a}')"
  "$tmp/queuegen" manifests "$h" pend "$PENDING" "$h/inbox/new"
  "$tmp/queuegen" manifests "$h" sub "$RUNS" "$tmp/$1-sub"
  t0=$EPOCHREALTIME
  "$VIGIL" --home "$h" pending --json >/dev/null # sweeps the inbox (and builds the task index once)
  printf '%-6s first `pending` (inbox sweep of %d, index build) %.2fs\n' "$1" "$PENDING" "$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {print b - a}')"
}

# run FILE CMD...: one run; appends its wall seconds to FILE (bash's
# microsecond clock). Output goes through a pipe, as to a reader.
run() {
  local out=$1 t0
  shift
  t0=$EPOCHREALTIME
  "$@" | cat >/dev/null
  awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.4f\n", b - a}' >>"$out"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# compare NAME ARGS...: interleaved runs in both homes; %i in ARGS is the
# run's number (000000-style), %h the home's name.
compare() {
  local name=$1
  shift
  : >"$tmp/small.t" && : >"$tmp/big.t"
  for i in $(seq 0 $((RUNS - 1))); do
    for home in small big; do
      local args=() a
      for a in "$@"; do
        a=${a//%i/$(printf '%06d' "$i")}
        a=${a//%j/$(printf '%06d' $((PENDING - 1 - i)))}
        args+=("${a//%h/$home}")
      done
      run "$tmp/$home.t" "$VIGIL" --home "$tmp/$home" "${args[@]}"
    done
  done
  local s b
  s=$(median <"$tmp/small.t")
  b=$(median <"$tmp/big.t")
  printf '%-9s %d finished %7.4fs   %d finished %7.4fs   ratio %5.2f (goal <= 1.2)\n' "$name" "$SMALL" "$s" "$BIG" "$b" \
    "$(awk -v a="$b" -v b="$s" 'BEGIN {print (b > 0) ? a / b : 0}')"
}

mkhome small "$SMALL"
mkhome big "$BIG"
compare pending pending --json
compare preview preview pend-%i
compare submit submit "$tmp/%h-sub/sub-%i.json"
compare approve approve --yes pend-%j
