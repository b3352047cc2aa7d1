#!/usr/bin/env bash
# What one statement on the portal's pool costs: `/readyz` (one
# `SELECT 1` through the pool, nothing else) driven with wrk, for two
# builds in turn, two rounds alternating, each on its own fresh database.
# Usage: bench/pool_statement.sh BEFORE_BIN_DIR AFTER_BIN_DIR [SECONDS] [CONNECTIONS]
# (each BIN_DIR holds a release `paydesk`)
set -euo pipefail
cd "$(dirname "$0")/.."

BEFORE="$1" AFTER="$2" SECONDS_TO_RUN="${3:-10}" CONNECTIONS="${4:-16}"
SERVER="${DATABASE_SERVER:-postgres://postgres@127.0.0.1:5432}"
PORT=18099
KEY="$(head -c 32 /dev/urandom | base64)"
OUT=bench/results
mkdir -p "$OUT"

for round in 1 2; do
  for side in before after; do
    dir=$BEFORE; [ "$side" = after ] && dir=$AFTER
    db="paydesk_bench_pool_$side"
    psql -q "$SERVER/postgres" -c "DROP DATABASE IF EXISTS $db" 2>/dev/null
    PAYDESK_LISTEN="127.0.0.1:$PORT" DATABASE_URL="$SERVER/$db" PAYDESK_BUILTIN_SANDBOX=false \
      PAYDESK_MASTER_KEY="$KEY" PAYDESK_DATA_DIR="$OUT/pool-data-$side" RUST_LOG=warn \
      "$dir/paydesk" >"$OUT/pool-$side.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do
      curl -sf "http://127.0.0.1:$PORT/readyz" >/dev/null && break
      sleep 0.1
    done
    echo "round $round, $side: $(wrk -t2 -c"$CONNECTIONS" -d"${SECONDS_TO_RUN}s" "http://127.0.0.1:$PORT/readyz" \
      | awk '/Latency/ {printf "latency avg %s, ", $2} /Requests\/sec/ {printf "%s requests/s", $2}')"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  done
done
