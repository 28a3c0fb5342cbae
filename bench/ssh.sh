#!/usr/bin/env bash
# The SSH gate (vigil serve --ssh) measured with the real OpenSSH client on
# loopback, against the real binary:
#   1. a decision over an SSH exec session, from the connection to the
#      device's execution: the wall time of `ssh … approve ID
#      --expect-preview HASH` (it returns once the device ran the task and the
#      result is recorded), P50/P95 over RUNS tasks; beside it the bare
#      round trip of `ssh … pending --json` and a local `vigil approve`;
#   2. an idle SSH screen (the Approvals pane in tmux, 100x30, one task
#      pending so its countdown redraws every second): the serve process's
#      CPU (utime+stime from /proc/PID/stat) and RSS over 30 s, against the
#      same 30 s with no session;
#   3. 20 sessions at once, each running `pending --json`: wall time and
#      errors (an exit status other than 0 or output that is not JSON).
# Usage: bench/ssh.sh [VIGIL_BIN] [RUNS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
VIGIL=$(realpath "${1:-$ROOT/vigil}")
RUNS=${2:-30}
[ -x "$VIGIL" ] || { echo "no vigil binary at $VIGIL (go build -o vigil .)" >&2; exit 2; }
for tool in ssh ssh-keygen tmux python3; do
  command -v $tool >/dev/null || { echo "$tool is required" >&2; exit 2; }
done
tmp=$(mktemp -d)
H=$tmp/home
SOCK=vigil-bench-ssh-$$
cleanup() {
  tmux -L "$SOCK" kill-server 2>/dev/null || true
  [ -n "${SERVE_PID:-}" ] && kill "$SERVE_PID" 2>/dev/null && wait "$SERVE_PID" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$H"
ssh-keygen -q -t ed25519 -N '' -C bench@op -f "$tmp/op"
cat >"$H/config.toml" <<TOML
[[leases.keys]]
kid = "local"
alg = "EdDSA"
public_key = "keys/issuer.pub.pem"

[[devices]]
id = "living-room"
driver = "sim"

[[operators]]
name = "bench"
keys = ["$(cat "$tmp/op.pub")"]
TOML
export VIGIL_HOME=$H
"$VIGIL" keys init >/dev/null 2>&1

"$VIGIL" serve --ssh 127.0.0.1:0 >"$tmp/serve.out" 2>"$tmp/serve.err" &
SERVE_PID=$!
for _ in $(seq 100); do grep -q 'ssh on' "$tmp/serve.out" 2>/dev/null && break; sleep 0.1; done
PORT=$(sed -n 's/.*ssh on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/serve.out")
[ -n "$PORT" ] || { cat "$tmp/serve.err" >&2; exit 3; }
SSHO=(ssh -p "$PORT" -i "$tmp/op" -o StrictHostKeyChecking=accept-new -o "UserKnownHostsFile=$tmp/known"
  -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityAgent=none -o LogLevel=ERROR)
SSH=("${SSHO[@]}" 127.0.0.1)

# submit ID: a pending MEDIA_PLAY task for the simulated player
submit() {
  local tok
  tok=$("$VIGIL" lease issue --sub agent:bench --task-id "$1" --cap MEDIA_PLAY --ttl 1h)
  printf '{"task_id":"%s","capability_id":"MEDIA_PLAY","lease":"%s","inputs":{"media_uri":"/media/%s.mkv","target_device":"living-room"}}' \
    "$1" "$tok" "$1" | "$VIGIL" submit - >/dev/null
}
hash_of() { "$VIGIL" preview "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["preview_hash"])'; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f\n", (b - a) * 1000}'; }
pct() { sort -n | awk -v p="$1" '{a[NR]=$1} END {i=int(NR*p/100+0.999); if (i<1) i=1; print a[i]}'; }

echo "== 1. a decision over SSH exec, connection to execution ($RUNS runs)"
: >"$tmp/approve" && : >"$tmp/bare" && : >"$tmp/local"
for i in $(seq "$RUNS"); do
  submit "ssh$i"; h=$(hash_of "ssh$i")
  t0=$EPOCHREALTIME
  "${SSH[@]}" approve "ssh$i" --expect-preview "$h" >"$tmp/res" </dev/null
  t1=$EPOCHREALTIME
  grep -q '"SUCCESS"' "$tmp/res" || { echo "run $i did not succeed:"; cat "$tmp/res"; exit 1; }
  grep -q "ssh$i.mkv" "$H/devices/living-room.journal" || { echo "run $i: the device did not run it"; exit 1; }
  ms "$t0" "$t1" >>"$tmp/approve"
  t0=$EPOCHREALTIME; "${SSH[@]}" pending --json >/dev/null </dev/null; t1=$EPOCHREALTIME
  ms "$t0" "$t1" >>"$tmp/bare"
  submit "loc$i"; h=$(hash_of "loc$i")
  t0=$EPOCHREALTIME; "$VIGIL" approve "loc$i" --yes --expect-preview "$h" >/dev/null; t1=$EPOCHREALTIME
  ms "$t0" "$t1" >>"$tmp/local"
done
printf '%-34s P50 %7s ms   P95 %7s ms\n' "ssh approve (connect→executed)" "$(pct 50 <"$tmp/approve")" "$(pct 95 <"$tmp/approve")"
printf '%-34s P50 %7s ms   P95 %7s ms\n' "ssh pending --json (round trip)" "$(pct 50 <"$tmp/bare")" "$(pct 95 <"$tmp/bare")"
printf '%-34s P50 %7s ms   P95 %7s ms\n' "local vigil approve (process)" "$(pct 50 <"$tmp/local")" "$(pct 95 <"$tmp/local")"

# cpu_ticks: the serve process's utime+stime in clock ticks; rss_kb: its RSS
cpu_ticks() { awk '{print $14 + $15}' "/proc/$SERVE_PID/stat"; }
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$SERVE_PID/status"; }
HZ=$(getconf CLK_TCK)
# window LABEL: CPU share of one core and RSS over 30 s
window() {
  local c0 c1 t0 t1 r0 r1
  r0=$(rss_kb); c0=$(cpu_ticks); t0=$EPOCHREALTIME
  sleep 30
  c1=$(cpu_ticks); t1=$EPOCHREALTIME; r1=$(rss_kb)
  awk -v l="$1" -v c="$((c1 - c0))" -v hz="$HZ" -v a="$t0" -v b="$t1" -v r0="$r0" -v r1="$r1" \
    'BEGIN {printf "%-34s CPU %5.2f%% of a core   RSS %6.1f -> %6.1f MiB\n", l, 100 * c / hz / (b - a), r0 / 1024, r1 / 1024}'
}
echo "== 2. an idle SSH screen, serve's CPU and memory over 30 s"
submit idle-task
window "no session"
tmux -L "$SOCK" -f /dev/null new-session -d -s op -x 100 -y 30 env TERM=xterm-256color "${SSHO[@]}" -t 127.0.0.1
for _ in $(seq 100); do tmux -L "$SOCK" capture-pane -p -t op 2>/dev/null | grep -q idle-task && break; sleep 0.1; done
tmux -L "$SOCK" capture-pane -p -t op | grep -q idle-task || { echo "the screen did not open"; tmux -L "$SOCK" capture-pane -p -t op; exit 1; }
window "one idle SSH screen (100x30)"
tmux -L "$SOCK" kill-server 2>/dev/null || true

echo "== 3. 20 sessions at once, each pending --json"
for round in 1 2 3; do
  t0=$EPOCHREALTIME
  pids=()
  for j in $(seq 20); do
    ( a=$EPOCHREALTIME; "${SSH[@]}" pending --json </dev/null >"$tmp/c$j" 2>"$tmp/e$j"; echo $? >"$tmp/x$j"; ms "$a" "$EPOCHREALTIME" >"$tmp/m$j" ) &
    pids+=($!)
  done
  wait "${pids[@]}" # not serve, also a child of this script
  t1=$EPOCHREALTIME
  # checked after the clock stopped: what each printed is JSON, and it exited 0
  fails=0
  for j in $(seq 20); do
    [ "$(cat "$tmp/x$j")" = 0 ] && python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/c$j" 2>/dev/null || fails=$((fails + 1))
  done
  printf 'round %d: 20 sessions in %s ms (slowest session %s ms), %d errors\n' "$round" "$(ms "$t0" "$t1")" \
    "$(cat "$tmp"/m* | sort -n | tail -1)" "$fails"
  rm -f "$tmp"/[cexm][0-9]*
done
printf 'serve RSS after: %.1f MiB\n' "$(awk '/^VmRSS/ {print $2/1024}' "/proc/$SERVE_PID/status")"
