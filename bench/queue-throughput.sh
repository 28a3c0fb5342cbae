#!/usr/bin/env bash
# One executor's rates on the shared queue against its floor (issue 34):
# BenchmarkQueueThroughput (exec/natsqueue) runs, in each round, 100
# submissions and 100 approvals on a local queue — the floor: the fsyncs of
# its records, results and audit log — and then the same through one
# executor over loopback NATS (an embedded nats-server): 100 agents submit
# at once, then 100 operators approve at once. Rounds alternate local and
# shared, so that the machine's load hits both alike; each run reports the
# medians of its rounds and the median of the per-round ratios (local rate
# over shared rate). This script runs the benchmark RUNS times and prints
# each run's figures, then the median of each figure over the runs.
# Usage: bench/queue-throughput.sh [RUNS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
ROUNDS=${2:-11}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/natsqueue.test" ./exec/natsqueue
for i in $(seq "$RUNS"); do
  "$tmp/natsqueue.test" -test.run XXX -test.bench BenchmarkQueueThroughput -test.benchtime "${ROUNDS}x" |
    grep '^BenchmarkQueueThroughput' | tee -a "$tmp/runs"
done
# each line: name N value unit value unit ...; the median of each unit
printf '\nmedians over %d runs\n' "$(wc -l <"$tmp/runs")"
awk '{ for (i = 3; i < NF; i += 2) if ($(i+1) != "ns/op") print $(i+1), $i }' "$tmp/runs" | sort -k1,1 -k2,2g |
  awk '{ v[$1] = v[$1] " " $2; n[$1]++ }
  END { for (u in v) { c = split(substr(v[u], 2), xs, " "); printf "  %-22s %10.3f\n", u, xs[int((c + 1) / 2)] } }' | sort
uptime
