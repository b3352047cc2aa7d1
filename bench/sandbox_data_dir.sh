#!/usr/bin/env bash
# What --data-dir costs, in one run: signed GET /api/balances (wrk) and
# quote + order pairs (the typed client, crates/sandbox/examples/
# trading_pairs.rs) on the release sandbox in memory, then with
# --data-dir on a fresh directory; prints each figure and the ratios
# (data-dir / memory). Each measurement gets a fresh sandbox with one
# worker, leaving the other core to the load generator.
# Usage: bench/sandbox_data_dir.sh [SECONDS] [CONNECTIONS] [CONCURRENCY]
# BIN_DIR=DIR takes paydesk-sandbox and trading_pairs from DIR instead of
# building them; BASE_BIN_DIR=DIR also runs the pairs with --data-dir on
# another build (say, the commit before a change) in the same run, for a
# before/after figure.
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_TO_RUN="${1:-10}"
CONNECTIONS="${2:-32}"
CONCURRENCY="${3:-16}"
PORT=18093
OUT=bench/results
mkdir -p "$OUT"

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
if [ -z "${BIN_DIR:-}" ]; then
  cargo build --release -q -p paydesk-sandbox --bin paydesk-sandbox --example trading_pairs
  BIN_DIR=./target/release
  PAIRS_BIN=./target/release/examples/trading_pairs
else
  PAIRS_BIN="$BIN_DIR/trading_pairs"
  [ -x "$PAIRS_BIN" ] || PAIRS_BIN="$BIN_DIR/examples/trading_pairs"
fi

CLIENT_ID=9c1e0c52-8a8e-4c3b-9d2a-6b7f1a2c9e03
SECRET=bench-secret-not-for-production
cat > "$OUT/data_dir_fixture.json" <<JSON
{"companies": [{"id": "4d0c1a52-1111-4c3b-9d2a-6b7f1a2c9e03", "name": "Bench Keepers",
  "balances": {"BTC": "250000000", "USDT": "1000000000000000", "USDC": "10000000000", "NGN": "5000000"},
  "clients": [{"client_id": "$CLIENT_ID", "client_secret": "$SECRET", "name": "bench"}]}]}
JSON
COUNT=$((SECONDS_TO_RUN * 60000))
python3 bench/lib/sign_requests.py "$CLIENT_ID" "$SECRET" "$COUNT" > "$OUT/data_dir_headers.tsv"

SANDBOX=
trap '[ -n "$SANDBOX" ] && kill "$SANDBOX" 2>/dev/null || true' EXIT

# start_sandbox MODE [BINARY_DIR]: MODE is "memory" or "disk" (a fresh data
# directory).
start_sandbox() {
  local extra=() bin="${2:-$BIN_DIR}"
  if [ "$1" = disk ]; then
    rm -rf "$OUT/data_dir_state"
    extra=(--data-dir "$OUT/data_dir_state")
  fi
  "$bin/paydesk-sandbox" --listen "127.0.0.1:$PORT" --fixture "$OUT/data_dir_fixture.json" \
    --workers 1 "${extra[@]}" >"$OUT/data_dir_sandbox.log" 2>&1 &
  SANDBOX=$!
  for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && return; sleep 0.1; done
  echo "the sandbox did not start" >&2
  exit 1
}

stop_sandbox() {
  kill "$SANDBOX"
  wait "$SANDBOX" 2>/dev/null || true
  SANDBOX=
}

# measure_pairs NAME MODE [BINARY_DIR]: pairs/s and sandbox CPU per pair.
measure_pairs() {
  start_sandbox "$2" "${3:-}"
  # The sandbox's CPU time (user + system, in clock ticks) around the run:
  # CPU per pair is a figure the other processes on the machine disturb
  # less than pairs/s.
  cpu_before=$(awk '{print $14 + $15}' "/proc/$SANDBOX/stat")
  "$PAIRS_BIN" "http://127.0.0.1:$PORT" "$CLIENT_ID" "$SECRET" \
    "$SECONDS_TO_RUN" "$CONCURRENCY" > "$OUT/data_dir_trading_$1.txt"
  cpu_after=$(awk '{print $14 + $15}' "/proc/$SANDBOX/stat")
  stop_sandbox
  RESULT[pairs_$1]=$(sed -n 's/.* = \([0-9]*\) pairs\/s.*/\1/p' "$OUT/data_dir_trading_$1.txt")
  pairs_done=$(sed -n 's/quote+order pairs: \([0-9]*\) in.*/\1/p' "$OUT/data_dir_trading_$1.txt")
  RESULT[cpu_$1]=$(awk -v t="$((cpu_after - cpu_before))" -v hz="$(getconf CLK_TCK)" -v n="$pairs_done" \
    'BEGIN { printf "%.0f", t / hz * 1e6 / n }')
}

declare -A RESULT
for mode in memory disk; do
  start_sandbox "$mode"
  WRK_THREADS=1 HEADERS_FILE="$OUT/data_dir_headers.tsv" TARGET_PATH=/api/balances \
    wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_TO_RUN}s" -s bench/lib/signed.lua "http://127.0.0.1:$PORT" \
    > "$OUT/data_dir_balances_$mode.txt"
  stop_sandbox
  RESULT[balances_$mode]=$(awk '/^throughput_rps:/ {print $2}' "$OUT/data_dir_balances_$mode.txt")

  measure_pairs "$mode" "$mode"
done
if [ -n "${BASE_BIN_DIR:-}" ]; then
  measure_pairs base disk "$BASE_BIN_DIR"
fi

{
  echo "sandbox with and without --data-dir, ${SECONDS_TO_RUN}s each, 1 sandbox worker"
  echo "GET /api/balances (signed, $CONNECTIONS connections): memory ${RESULT[balances_memory]} req/s, data-dir ${RESULT[balances_disk]} req/s"
  echo "quote+order pairs ($CONCURRENCY at a time): memory ${RESULT[pairs_memory]} pairs/s, data-dir ${RESULT[pairs_disk]} pairs/s"
  echo "sandbox CPU per pair: memory ${RESULT[cpu_memory]} us, data-dir ${RESULT[cpu_disk]} us"
  if [ -n "${BASE_BIN_DIR:-}" ]; then
    echo "the build in $BASE_BIN_DIR with data-dir: ${RESULT[pairs_base]} pairs/s, CPU per pair ${RESULT[cpu_base]} us"
  fi
  echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
  grep -h "latency\|errors" "$OUT"/data_dir_trading_*.txt "$OUT"/data_dir_balances_*.txt | sed 's/^/  /'
  awk -v bm="${RESULT[balances_memory]}" -v bd="${RESULT[balances_disk]}" \
      -v pm="${RESULT[pairs_memory]}" -v pd="${RESULT[pairs_disk]}" \
      -v cm="${RESULT[cpu_memory]}" -v cd="${RESULT[cpu_disk]}" \
      'BEGIN { printf "ratio data-dir/memory: reads %.2f, writes %.2f (CPU per pair: %.2f)\n", bd / bm, pd / pm, cm / cd }'
} | tee "$OUT/sandbox_data_dir.txt"
