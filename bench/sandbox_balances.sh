#!/usr/bin/env bash
# Throughput and latency of the sandbox's GET /api/balances with signing.
# Starts the release sandbox with a fixture of known credentials, signs one
# request per nonce in advance (the sandbox refuses replays), then drives it
# with wrk. Usage: bench/sandbox_balances.sh [SECONDS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_TO_RUN="${1:-10}"
CONNECTIONS="${2:-32}"
THREADS=1
PORT=18090
OUT=bench/results
mkdir -p "$OUT"

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
cargo build --release -q -p paydesk-sandbox

CLIENT_ID=3f1e0c52-8a8e-4c3b-9d2a-6b7f1a2c9e01
SECRET=bench-secret-not-for-production
cat > "$OUT/fixture.json" <<JSON
{"companies": [{"name": "Bench Ltd",
  "balances": {"BTC": "250000000", "USDT": "10000000000", "USDC": "10000000000", "NGN": "5000000"},
  "clients": [{"client_id": "$CLIENT_ID", "client_secret": "$SECRET", "name": "bench"}]}]}
JSON

./target/release/paydesk-sandbox --listen "127.0.0.1:$PORT" --fixture "$OUT/fixture.json" --workers 1 >"$OUT/sandbox.log" 2>&1 &
SANDBOX=$!
trap 'kill $SANDBOX 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done

# Enough fresh nonces for ~60k requests/s for the whole run.
COUNT=$((SECONDS_TO_RUN * 60000))
python3 bench/lib/sign_requests.py "$CLIENT_ID" "$SECRET" "$COUNT" > "$OUT/headers.tsv"

echo "sandbox GET /api/balances, signed, ${SECONDS_TO_RUN}s, ${CONNECTIONS} connections, 1 sandbox worker, wrk -t$THREADS"
WRK_THREADS=$THREADS HEADERS_FILE="$OUT/headers.tsv" TARGET_PATH=/api/balances \
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${SECONDS_TO_RUN}s" -s bench/lib/signed.lua "http://127.0.0.1:$PORT" \
  | tee "$OUT/sandbox_balances.txt"
