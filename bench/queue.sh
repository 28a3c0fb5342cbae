#!/usr/bin/env bash
# Queue commands with a long task history (issue 21, Scale): `submit`,
# `preview`, `approve` and `pending` in a home with 100 pending and 100,000
# finished tasks, against the same home with 100 finished (goal: <= 1.2x).
# Runs are interleaved (small, big, small, big, ...) so that machine load
# hits both alike; medians are shown. The finished tasks are written by
# bench/queuegen (real leases, manifests, signed results and a chained audit
# log that `vigil audit verify` accepts); the pending ones go through the
# inbox and `vigil pending`, as an agent's would.
# With IDLE=N (e.g. IDLE=1000) it then measures the TUI's idle CPU on the
# Approvals pane with N pending tasks: a real `vigil` in tmux, its CPU time
# read from /proc over IDLE_SECS seconds after it settled (goal <= 1%).
# Then it submits VISIBLE_RUNS (9) more and times each one's arrival on the
# screen. IDLE_TIMEOUT (default 6h, so nothing expires while it is
# measured) is the approval timeout (e.g. IDLE_TIMEOUT=50m); deadlines in
# their last two minutes show seconds and repaint the screen every second.
# Usage: [IDLE=1000] bench/queue.sh [VIGIL_BIN] [RUNS] [FINISHED]
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

# idle N: the TUI's CPU share while it shows N pending tasks and nothing
# happens (tmux gives it a real terminal).
idle() {
  local n=$1 secs=${IDLE_SECS:-60} h=$tmp/idle pid t0 t1 c0 c1 hz
  command -v tmux >/dev/null || { echo "idle: tmux is required" >&2; exit 2; }
  mkdir -p "$h"
  cp "$tmp/small/config.toml" "$h/"
  printf '\n[approvals]\ntimeout = "%s"\n' "${IDLE_TIMEOUT:-6h}" >>"$h/config.toml"
  "$VIGIL" --home "$h" keys init >/dev/null 2>&1
  "$tmp/queuegen" manifests "$h" idle "$n" "$h/inbox/new"
  "$VIGIL" --home "$h" pending --json >/dev/null
  tmux -L vigil-bench-$$ new-session -d -x 120 -y 40 "$VIGIL --home $h"
  for _ in $(seq 60); do tmux -L vigil-bench-$$ capture-pane -p | grep -q 'type a pattern' && break; sleep 0.5; done
  for _ in $(seq 20); do # out of the search field, to the Approvals tab
    tmux -L vigil-bench-$$ send-keys Escape
    sleep 0.3
    tmux -L vigil-bench-$$ send-keys 3
    sleep 1
    tmux -L vigil-bench-$$ capture-pane -p | grep -q 'Pending approvals' && break
  done
  sleep 10 # the audit pane's first scan, the first reload
  pid=$(pgrep -f "^$VIGIL --home $h\$" | head -1)
  hz=$(getconf CLK_TCK)
  c0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  t0=$EPOCHREALTIME
  sleep "$secs"
  c1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
  t1=$EPOCHREALTIME
  tmux -L vigil-bench-$$ capture-pane -p | grep -m1 'Pending approvals' || echo "idle: not on the Approvals tab" >&2
  visible "$h" "$n"
  tmux -L vigil-bench-$$ kill-server
  printf 'idle TUI, Approvals pane, %d pending, timeout %s: %.2f%% of one core over %ds (goal <= 1%%)\n' "$n" "${IDLE_TIMEOUT:-6h}" \
    "$(awk -v c="$((c1 - c0))" -v hz="$hz" -v a="$t0" -v b="$t1" 'BEGIN {print 100 * c / hz / (b - a)}')" "$secs"
}

# visible HOME N: how long after `vigil submit` returns the running TUI
# (showing N pending) counts the new task on screen, over VISIBLE_RUNS
# submissions; tmux's screen is read every few milliseconds, so the figures
# include up to one read's delay (goal <= 100 ms).
visible() {
  local h=$1 n=$2 i t0 t1 want
  "$tmp/queuegen" manifests "$h" vis "${VISIBLE_RUNS:-9}" "$tmp/vis"
  : >"$tmp/vis.t"
  i=0
  for f in "$tmp"/vis/*.json; do
    i=$((i + 1))
    want="Pending approvals ($((n + i)))"
    "$VIGIL" --home "$h" submit "$f" >/dev/null
    t0=$EPOCHREALTIME
    for _ in $(seq 2000); do
      tmux -L vigil-bench-$$ capture-pane -p | grep -qF "$want" && break
      sleep 0.002
    done
    t1=$EPOCHREALTIME
    tmux -L vigil-bench-$$ capture-pane -p | grep -qF "$want" || { echo "visible: $want never shown" >&2; return 1; }
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.1f\n", 1000 * (b - a)}' >>"$tmp/vis.t"
  done
  printf 'a new task on the idle TUI with %d pending, after submit returned: median %s ms, max %s ms over %d (goal <= 100 ms)\n' \
    "$n" "$(median <"$tmp/vis.t")" "$(sort -n "$tmp/vis.t" | tail -1)" "$i"
}

if [ -n "${IDLE:-}" ]; then idle "$IDLE"; fi
