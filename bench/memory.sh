#!/usr/bin/env bash
# Memory at scale (issue 21): `vigil memory import` of N memories against a
# plain single-transaction SQLite insert of the same rows, and search_memory
# over MCP against SQLite FTS5's own ranking of the naive OR query.
#
# The floor is the sqlite3 shell: the same schema (taken from a fresh Vigil
# database), the rows as plain INSERT statements in one transaction and the
# FTS5 index filled once at the end by one INSERT ... SELECT. Vigil parses and
# validates JSON Lines and also fills memory_tags.
#
# Runs are interleaved (floor, vigil, floor, vigil, ...) so machine load hits
# both alike; medians are shown, with user+system CPU beside wall time.
# The corpus (Zipf-distributed words from a 1,728-word vocabulary, like
# exec/memory's Go benchmarks) is generated once into bench/out/.
#
# Usage: bench/memory.sh [VIGIL_BIN] [N] [IMPORT_RUNS] [QUERIES] [SEARCH_RUNS]
#        MODE=hybrid bench/memory.sh [VIGIL_BIN] [N=100000] [DIM=384] [QUERIES=200]
# MODE=hybrid measures issue 27's hybrid search_memory over MCP at N memories
# against a loopback stand-in for the embedding model (the model itself
# cannot run here): P50/P95 of the round trip, the embedder's own time apart,
# and the memory the `vigil mcp` process holds.
set -euo pipefail
VIGIL=$(realpath "${1:-./vigil}")
N=${2:-1000000}
IMPORT_RUNS=${3:-3}
QUERIES=${4:-40}
SEARCH_RUNS=${5:-3}
[ -x "$VIGIL" ] || { echo "no vigil binary at $VIGIL (go build -o vigil .)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "needs the sqlite3 shell (apt-get install sqlite3)" >&2; exit 2; }
command -v node >/dev/null || { echo "needs node (the MCP client)" >&2; exit 2; }
OUT=$(cd "$(dirname "$0")" && pwd)/out
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
corpus=$OUT/memories-$N.jsonl
floorsql=$OUT/memories-$N.sql

# gen: N memories as JSON Lines. Word k of the vocabulary has probability
# proportional to (2+k)^-1.1, so the first words are in most memories and
# most words are rare; texts have 15-44 words, 1-2 of 50 tags, 1 of 10
# sources and a day in 2023-2025.
gen() {
  local days=$tmp/days
  for d in $(seq 0 1095); do date -u -d "2023-01-01 +$d days" +%F; done >"$days"
  awk -v n="$N" -v days="$days" 'BEGIN {
    srand(12345)
    split("ka lo mi ne ru sa ti vo ze pa do gu", s, " ")
    k = 0
    for (a = 1; a <= 12; a++) for (b = 1; b <= 12; b++) for (c = 1; c <= 12; c++) { v[k] = s[a] s[b] s[c]; k++ }
    tot = 0
    for (i = 0; i < k; i++) { tot += (2 + i) ^ -1.1; cdf[i] = tot }
    for (i = 0; i < k; i++) cdf[i] /= tot
    nd = 0
    while ((getline d < days) > 0) day[nd++] = d
    for (r = 0; r < n; r++) {
      nw = 15 + int(rand() * 30); t = ""
      for (w = 0; w < nw; w++) {
        u = rand(); lo = 0; hi = k - 1
        while (lo < hi) { m = int((lo + hi) / 2); if (cdf[m] < u) lo = m + 1; else hi = m }
        t = t v[lo] " "
      }
      tags = sprintf("\"tag%02d\"", int(rand() * 50))
      if (rand() < 0.5) tags = tags sprintf(",\"tag%02d\"", int(rand() * 50))
      printf "{\"text\":\"%s\",\"tags\":[%s],\"source\":\"source%d\",\"created_at\":\"%s\"}\n", t, tags, int(rand() * 10), day[int(rand() * nd)]
    }
  }' >"$corpus.tmp"
  mv "$corpus.tmp" "$corpus"
}

# write_mcp_client: one `vigil mcp` process; each tools/call round trip is
# timed; optionally the process's resident memory is written at the end.
write_mcp_client() {
  cat >"$tmp/mcp.js" <<'EOF'
const { spawn } = require('child_process');
const fs = require('fs');
const [vigil, queries, out, texts, rss] = process.argv.slice(2);
const qs = fs.readFileSync(queries, 'utf8').trim().split('\n').map(l => l.split('\t')[1]);
const p = spawn(vigil, ['mcp'], { stdio: ['pipe', 'pipe', 'ignore'] });
let buf = '', waiting = null;
p.stdout.on('data', d => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i); buf = buf.slice(i + 1);
    const m = JSON.parse(line);
    if (m.id !== undefined && waiting) { const w = waiting; waiting = null; w(m); }
  }
});
const call = (id, method, params) => new Promise(res => {
  waiting = res;
  p.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
});
(async () => {
  await call(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } });
  p.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
  const times = [], results = [];
  for (let i = 0; i < qs.length; i++) {
    const t0 = process.hrtime.bigint();
    const r = await call(i + 1, 'tools/call', { name: 'search_memory', arguments: { query: qs[i], limit: 10 } });
    times.push(Number(process.hrtime.bigint() - t0) / 1e9);
    if (r.error || r.result.isError) { console.error(JSON.stringify(r)); process.exit(1); }
    results.push(r.result.content[0].text);
  }
  fs.writeFileSync(out, times.join('\n') + '\n');
  if (texts) fs.writeFileSync(texts, JSON.stringify(results));
  if (rss) {
    const st = fs.readFileSync(`/proc/${p.pid}/status`, 'utf8');
    const kb = k => Number((st.match(new RegExp(k + ':\\s+(\\d+)')) || [0, 0])[1]);
    fs.writeFileSync(rss, `${Math.round(kb('VmRSS') / 1024)} MB resident (peak ${Math.round(kb('VmHWM') / 1024)} MB)`);
  }
  p.stdin.end();
})();
EOF
}

# hybrid_bench: the stand-in embedder (Ollama's /api/embed: a text's vector
# is the sum of fixed pseudo-random vectors of its words, so texts sharing
# words lie close) serves `vigil memory import` and then `vigil mcp`.
hybrid_bench() {
  cat >"$tmp/embed.js" <<'EOF'
const http = require('http');
const fs = require('fs');
const dim = Number(process.argv[2]), timesFile = process.argv[3];
const cache = new Map();
function wordVec(w) {
  let v = cache.get(w);
  if (v) return v;
  let h = 2166136261;
  for (let i = 0; i < w.length; i++) { h ^= w.charCodeAt(i); h = Math.imul(h, 16777619) >>> 0; }
  v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) { h ^= h << 13; h >>>= 0; h ^= h >>> 17; h ^= h << 5; h >>>= 0; v[i] = (h / 4294967296) * 2 - 1; }
  cache.set(w, v);
  return v;
}
const times = [];
http.createServer((req, res) => {
  let body = '';
  req.on('data', d => body += d);
  req.on('end', () => {
    const t0 = process.hrtime.bigint();
    const { model, input } = JSON.parse(body);
    if (req.method !== 'POST' || req.url !== '/api/embed' || !model || !Array.isArray(input)) { res.writeHead(400); res.end('bad request'); return; }
    const out = input.map(t => {
      const v = new Float32Array(dim);
      for (const w of t.toLowerCase().split(/[^a-z0-9]+/)) if (w) { const x = wordVec(w); for (let i = 0; i < dim; i++) v[i] += x[i]; }
      return Array.from(v, x => Math.round(x * 1e4) / 1e4);
    });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ model, embeddings: out }));
    if (input.length === 1) times.push(Number(process.hrtime.bigint() - t0) / 1e9);
  });
}).listen(0, '127.0.0.1', function () { fs.writeFileSync(timesFile + '.port', String(this.address().port)); });
process.on('SIGTERM', () => { fs.writeFileSync(timesFile, times.join('\n') + '\n'); process.exit(0); });
EOF
  node "$tmp/embed.js" "$DIM" "$tmp/embed.times" &
  local epid=$!
  for _ in $(seq 50); do [ -s "$tmp/embed.times.port" ] && break; sleep 0.1; done
  local home=$tmp/hybrid
  mkdir -p "$home"
  printf '[memory.embedder]\nkind = "ollama"\nurl = "http://127.0.0.1:%s"\nmodel = "hash-%s"\nbatch_size = 512\ntimeout = "120s"\nrequired = true\n' \
    "$(cat "$tmp/embed.times.port")" "$DIM" >"$home/config.toml"
  echo "importing and embedding $N memories ($DIM dimensions) ..." >&2
  VIGIL_HOME=$home /usr/bin/time -f "import+embed %e s wall, %M KB peak" "$VIGIL" memory import "$corpus" >/dev/null 2>"$tmp/imp.err" ||
    { cat "$tmp/imp.err" >&2; exit 1; }
  tail -1 "$tmp/imp.err" >&2
  awk -v q="$QUERIES" 'BEGIN {
    srand(9)
    split("ka lo mi ne ru sa ti vo ze pa do gu", s, " ")
    k = 0
    for (a = 1; a <= 12; a++) for (b = 1; b <= 12; b++) for (c = 1; c <= 12; c++) { v[k] = s[a] s[b] s[c]; k++ }
    for (i = 0; i < q; i++) print "hybrid\t" v[int(rand() * k)] " " v[int(rand() * k)]
  }' >"$tmp/queries"
  write_mcp_client
  VIGIL_HOME=$home node "$tmp/mcp.js" "$VIGIL" "$tmp/queries" "$tmp/vigil.h" "" "$tmp/rss"
  kill -TERM "$epid" && wait "$epid" || true
  # The first query loads the vectors: it is shown apart, not ranked.
  tail -n +2 "$tmp/vigil.h" >"$tmp/v" && tail -n +2 "$tmp/embed.times" >"$tmp/e"
  paste "$tmp/v" "$tmp/e" | awk '{print $1 - $2}' >"$tmp/ve"
  printf 'hybrid search_memory over MCP, %d memories, %d dimensions, %d queries: first %.0f ms; P50 %.1f ms P95 %.1f ms without the embedder (with it: P50 %.1f P95 %.1f; the embedder alone: P95 %.1f ms) (target P95 <= 40 ms); vigil mcp holds %s\n' \
    "$N" "$DIM" "$QUERIES" "$(head -1 "$tmp/vigil.h" | awk '{print $1*1000}')" \
    "$(pct 50 <"$tmp/ve" | awk '{print $1*1000}')" "$(pct 95 <"$tmp/ve" | awk '{print $1*1000}')" \
    "$(pct 50 <"$tmp/v" | awk '{print $1*1000}')" "$(pct 95 <"$tmp/v" | awk '{print $1*1000}')" \
    "$(pct 95 <"$tmp/e" | awk '{print $1*1000}')" "$(cat "$tmp/rss")"
}

# floor_sql: the corpus as INSERT statements in one transaction (the
# generator's lines have no escapes, so fields are cut out with match()).
floor_sql() {
  awk 'BEGIN { print "BEGIN;" }
  {
    match($0, /"text":"[^"]*"/); text = substr($0, RSTART + 8, RLENGTH - 9)
    match($0, /"tags":\[[^]]*\]/); tags = substr($0, RSTART + 7, RLENGTH - 7)
    match($0, /"source":"[^"]*"/); src = substr($0, RSTART + 10, RLENGTH - 11)
    match($0, /"created_at":"[^"]*"/); d = substr($0, RSTART + 14, RLENGTH - 15)
    gsub(/\047/, "\047\047", text)
    printf "INSERT INTO memories(text,tags,source,created_at) VALUES(\047%s\047,\047%s\047,\047%s\047,unixepoch(\047%s\047)*1000);\n", text, tags, src, d
  }
  END { print "INSERT INTO memories_fts(rowid,text,tags) SELECT id,text,tags FROM memories;"; print "COMMIT;" }' "$corpus" >"$floorsql.tmp"
  mv "$floorsql.tmp" "$floorsql"
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
pct() { sort -n | awk -v p="$1" '{a[NR]=$1} END {i=int(NR*p/100+0.999); if (i<1) i=1; print a[i]}'; }

if [ "${MODE:-}" = hybrid ]; then
  N=${2:-100000}
  DIM=${3:-384}
  QUERIES=${4:-200}
  corpus=$OUT/memories-$N.jsonl
  if [ ! -s "$corpus" ]; then
    if [ -s "$OUT/memories-1000000.jsonl" ] && [ "$N" -le 1000000 ]; then
      head -n "$N" "$OUT/memories-1000000.jsonl" >"$corpus"
    else
      echo "generating $N memories into $corpus ..." >&2
      gen
    fi
  fi
  hybrid_bench
  exit 0
fi
[ -s "$corpus" ] || { echo "generating $N memories into $corpus ..." >&2; gen; }
[ -s "$floorsql" ] || floor_sql

# The schema, exactly as Vigil creates it (FTS5 shadow tables excepted).
VIGIL_HOME=$tmp/schema "$VIGIL" memory import - </dev/null >/dev/null
sqlite3 "$tmp/schema/memory.db" .schema |
  grep -v "^CREATE TABLE IF NOT EXISTS 'memories_fts_\|sqlite_" >"$tmp/schema.sql"


# timed FILE CMD...: appends "wall cpu" seconds (cpu = user + system).
timed() {
  local out=$1
  shift
  /usr/bin/time -o "$tmp/t" -f "%e %U %S" "$@" >/dev/null
  awk '{printf "%s %.2f\n", $1, $2 + $3}' "$tmp/t" >>"$out"
}

: >"$tmp/imp.floor" && : >"$tmp/imp.vigil"
for i in $(seq "$IMPORT_RUNS"); do
  rm -rf "$tmp/floor" "$tmp/home" && mkdir -p "$tmp/floor" "$tmp/home"
  timed "$tmp/imp.floor" sh -c "cat '$tmp/schema.sql' '$floorsql' | sqlite3 '$tmp/floor/f.db'"
  VIGIL_HOME=$tmp/home timed "$tmp/imp.vigil" "$VIGIL" memory import "$corpus"
  echo "import run $i/$IMPORT_RUNS: floor $(tail -1 "$tmp/imp.floor")  vigil $(tail -1 "$tmp/imp.vigil")" >&2
done
# The last import's home is kept in bench/out/ so that IMPORT_RUNS=0 can
# time the searches alone.
if [ "$IMPORT_RUNS" -gt 0 ]; then
  fw=$(cut -d' ' -f1 "$tmp/imp.floor" | median) vw=$(cut -d' ' -f1 "$tmp/imp.vigil" | median)
  fc=$(cut -d' ' -f2 "$tmp/imp.floor" | median) vc=$(cut -d' ' -f2 "$tmp/imp.vigil" | median)
  printf 'import %d memories: floor %.1fs (cpu %.1fs)  vigil %.1fs (cpu %.1fs)  ratio wall %.2f cpu %.2f (target <= 1.5)\n' \
    "$N" "$fw" "$fc" "$vw" "$vc" "$(awk -v a="$vw" -v b="$fw" 'BEGIN{print a/b}')" "$(awk -v a="$vc" -v b="$fc" 'BEGIN{print a/b}')"
  rm -rf "$OUT/home-$N" && mv "$tmp/home" "$OUT/home-$N"
fi
[ -s "$OUT/home-$N/memory.db" ] || { echo "no imported home in $OUT/home-$N: run with IMPORT_RUNS >= 1" >&2; exit 2; }
rm -rf "$tmp/home" && ln -s "$OUT/home-$N" "$tmp/home"

# Queries: "frequent" pairs one of the 20 commonest words (in 30-95% of the
# memories) with any word; "selective" pairs two words from rank 300 on (each
# in at most ~1.2% of the memories).
awk -v q="$QUERIES" 'BEGIN {
  srand(7)
  split("ka lo mi ne ru sa ti vo ze pa do gu", s, " ")
  k = 0
  for (a = 1; a <= 12; a++) for (b = 1; b <= 12; b++) for (c = 1; c <= 12; c++) { v[k] = s[a] s[b] s[c]; k++ }
  for (i = 0; i < q; i++) print "frequent\t" v[int(rand() * 20)] " " v[int(rand() * k)]
  for (i = 0; i < q; i++) print "selective\t" v[300 + int(rand() * (k - 300))] " " v[300 + int(rand() * (k - 300))]
}' >"$tmp/queries"

# The floor: the sqlite3 shell's .timer around FTS5's ranking of the naive OR query.
floor_pass() {
  {
    echo ".timer on"
    cut -f2 "$tmp/queries" | awk '{printf "SELECT rowid, bm25(memories_fts, 1.0, 0.5) AS r FROM memories_fts WHERE memories_fts MATCH \047\"%s\" OR \"%s\"\047 ORDER BY r LIMIT 10;\n", $1, $2}'
  } | sqlite3 "$tmp/home/memory.db" | awk '/^Run Time: real/ {print $4}' >"$1"
}


write_mcp_client
VIGIL_HOME=$tmp/home "$VIGIL" memory search -q warmup >/dev/null
for i in $(seq "$SEARCH_RUNS"); do
  floor_pass "$tmp/floor.$i"
  VIGIL_HOME=$tmp/home node "$tmp/mcp.js" "$VIGIL" "$tmp/queries" "$tmp/vigil.$i" "$tmp/texts.json"
done
# per query: the median over runs
paste "$tmp"/floor.* | awk '{n=split($0,a,"\t"); for(i=1;i<=n;i++) b[i]=a[i]; for(i=1;i<=n;i++) for(j=i+1;j<=n;j++) if (b[j]<b[i]) {t=b[i];b[i]=b[j];b[j]=t}; print b[int((n+1)/2)]}' >"$tmp/floor.med"
paste "$tmp"/vigil.* | awk '{n=split($0,a,"\t"); for(i=1;i<=n;i++) b[i]=a[i]; for(i=1;i<=n;i++) for(j=i+1;j<=n;j++) if (b[j]<b[i]) {t=b[i];b[i]=b[j];b[j]=t}; print b[int((n+1)/2)]}' >"$tmp/vigil.med"
paste <(cut -f1 "$tmp/queries") "$tmp/floor.med" "$tmp/vigil.med" >"$tmp/lat"
for kind in frequent selective; do
  grep "^$kind" "$tmp/lat" | cut -f2 >"$tmp/f" && grep "^$kind" "$tmp/lat" | cut -f3 >"$tmp/v"
  f50=$(pct 50 <"$tmp/f") f95=$(pct 95 <"$tmp/f") v50=$(pct 50 <"$tmp/v") v95=$(pct 95 <"$tmp/v")
  printf 'search %-9s %d queries: floor P50 %.0f ms P95 %.0f ms  vigil over MCP P50 %.0f ms P95 %.0f ms  ratio P95 %.3f%s\n' \
    "$kind" "$QUERIES" "$(awk -v x="$f50" 'BEGIN{print x*1000}')" "$(awk -v x="$f95" 'BEGIN{print x*1000}')" \
    "$(awk -v x="$v50" 'BEGIN{print x*1000}')" "$(awk -v x="$v95" 'BEGIN{print x*1000}')" \
    "$(awk -v a="$v95" -v b="$f95" 'BEGIN{print a/b}')" "$([ "$kind" = frequent ] && echo ' (target <= 0.2)')"
done

# Same top-10 for selective queries: the one statement's order (score, then
# newest, then highest id) against the previews Vigil answered with.
cut -f2 "$tmp/queries" | tail -n "$QUERIES" | awk '{printf "SELECT group_concat(p, char(31)) FROM (SELECT substr(m.text, 1, 200) AS p FROM memories_fts CROSS JOIN memories m ON m.id = memories_fts.rowid WHERE memories_fts MATCH \047\"%s\" OR \"%s\"\047 ORDER BY bm25(memories_fts, 1.0, 0.5), m.created_at DESC, m.id DESC LIMIT 10);\n", $1, $2}' |
  sqlite3 "$tmp/home/memory.db" >"$tmp/want"
node -e '
const fs = require("fs");
const [texts, want, q] = process.argv.slice(1);
const got = JSON.parse(fs.readFileSync(texts, "utf8")).slice(-Number(q));
const exp = fs.readFileSync(want, "utf8").split("\n").slice(0, Number(q));
let same = 0;
got.forEach((t, i) => {
  const previews = t.split("\n").filter((l, j, a) => j > 0 && /^\d+\. \[Score/.test(a[j - 1])).map(l => l.replace(/\.\.\.$/, ""));
  if (previews.join("\x1f") === exp[i]) same++;
  else if (process.env.DEBUG) console.error("differs:", i, previews, exp[i]);
});
console.log(`selective queries with the same top-10 as the one statement: ${same}/${got.length}`);
' "$tmp/texts.json" "$tmp/want" "$QUERIES"
