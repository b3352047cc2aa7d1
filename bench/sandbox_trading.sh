#!/usr/bin/env bash
# Throughput of quote + order pairs on the release sandbox: each pair is a
# signed POST /api/trading/quotes and a signed POST /api/trading/orders on
# that quote, made by the typed client (crates/sandbox/examples/
# trading_pairs.rs), CONCURRENCY pairs at a time.
# Usage: bench/sandbox_trading.sh [SECONDS] [CONCURRENCY]
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_TO_RUN="${1:-10}"
CONCURRENCY="${2:-16}"
PORT=18092
OUT=bench/results
mkdir -p "$OUT"

cargo build --release -q -p paydesk-sandbox --bin paydesk-sandbox --example trading_pairs

CLIENT_ID=7b1e0c52-8a8e-4c3b-9d2a-6b7f1a2c9e02
SECRET=bench-secret-not-for-production
# A wallet big enough for millions of 0.0001 BTC buys.
cat > "$OUT/trading_fixture.json" <<JSON
{"companies": [{"name": "Bench Traders",
  "balances": {"BTC": "250000000", "USDT": "1000000000000000", "USDC": "10000000000", "NGN": "5000000"},
  "clients": [{"client_id": "$CLIENT_ID", "client_secret": "$SECRET", "name": "bench"}]}]}
JSON

./target/release/paydesk-sandbox --listen "127.0.0.1:$PORT" --fixture "$OUT/trading_fixture.json" --workers 1 >"$OUT/trading_sandbox.log" 2>&1 &
SANDBOX=$!
trap 'kill $SANDBOX 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done

echo "sandbox quote+order pairs, ${SECONDS_TO_RUN}s, ${CONCURRENCY} at a time, 1 sandbox worker"
./target/release/examples/trading_pairs "http://127.0.0.1:$PORT" "$CLIENT_ID" "$SECRET" "$SECONDS_TO_RUN" "$CONCURRENCY" \
  | tee "$OUT/sandbox_trading.txt"
