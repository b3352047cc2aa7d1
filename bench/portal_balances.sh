#!/usr/bin/env bash
# The portal's balances page against the same signed call made directly to
# the sandbox, in one run: requests/s, p50, p99 and the ratios.
#
# Starts the release sandbox (known credentials, one worker) and the release
# portal with a fresh database, signs in through the real forms, connects a
# tenant to the sandbox, then drives both with wrk.
# Usage: bench/portal_balances.sh [SECONDS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_TO_RUN="${1:-10}"
CONNECTIONS="${2:-32}"
SANDBOX_PORT=18090
PORTAL_PORT=18081
OUT=bench/results
mkdir -p "$OUT"
SERVER="${DATABASE_SERVER:-postgres://postgres@127.0.0.1:5432}"
DB=paydesk_bench

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
cargo build --release -q -p paydesk-sandbox -p paydesk

CLIENT_ID=3f1e0c52-8a8e-4c3b-9d2a-6b7f1a2c9e01
SECRET=bench-secret-not-for-production
cat > "$OUT/fixture.json" <<JSON
{"companies": [{"name": "Bench Ltd",
  "balances": {"BTC": "250000000", "USDT": "10000000000", "USDC": "10000000000", "NGN": "5000000"},
  "clients": [{"client_id": "$CLIENT_ID", "client_secret": "$SECRET", "name": "bench"}]}]}
JSON

psql "$SERVER/postgres" -qc "DROP DATABASE IF EXISTS $DB" >/dev/null
./target/release/paydesk-sandbox --listen "127.0.0.1:$SANDBOX_PORT" --fixture "$OUT/fixture.json" --workers 1 >"$OUT/sandbox.log" 2>&1 &
SANDBOX=$!
PAYDESK_LISTEN="127.0.0.1:$PORTAL_PORT" DATABASE_URL="$SERVER/$DB" PAYDESK_BUILTIN_SANDBOX=false \
  PAYDESK_MASTER_KEY="$(head -c 32 /dev/urandom | base64)" RUST_LOG=warn \
  ./target/release/paydesk >"$OUT/portal.log" 2>&1 &
PORTAL=$!
trap 'kill $SANDBOX $PORTAL 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  curl -sf "http://127.0.0.1:$PORTAL_PORT/healthz" >/dev/null && curl -sf "http://127.0.0.1:$SANDBOX_PORT/healthz" >/dev/null && break
  sleep 0.1
done

# Sign in through the forms like a browser, then connect a tenant.
P="http://127.0.0.1:$PORTAL_PORT"
JAR="$OUT/cookies.txt"; rm -f "$JAR"
token() { curl -s -c "$JAR" -b "$JAR" "$P$1" | grep -o 'name="csrf_token" value="[^"]*"' | head -1 | sed 's/.*value="//;s/"$//'; }
post() { local page=$1 path=$2; shift 2; curl -s -o /dev/null -c "$JAR" -b "$JAR" --data-urlencode "csrf_token=$(token "$page")" "$@" "$P$path"; }
ONE_TIME=$(grep 'One-time password' "$OUT/portal.log" | awk '{print $3}')
post /login /login --data-urlencode "email=admin@paydesk.local" --data-urlencode "password=$ONE_TIME"
post /account/password /account/password --data-urlencode "current_password=$ONE_TIME" \
  --data-urlencode "new_password=bench-password-123" --data-urlencode "confirm_password=bench-password-123"
post /account/password /platform/tenants --data-urlencode "name=Bench Co"
post /platform /platform/allowlist --data-urlencode "base_url=http://127.0.0.1:$SANDBOX_PORT"
post /connections /connections --data-urlencode "name=Bench sandbox" --data-urlencode "environment=sandbox" \
  --data-urlencode "base_url=http://127.0.0.1:$SANDBOX_PORT" --data-urlencode "client_id=$CLIENT_ID" \
  --data-urlencode "client_secret=$SECRET"
COOKIE="paydesk_session=$(awk '$6 == "paydesk_session" {print $7}' "$JAR")"
curl -sf -H "Cookie: $COOKIE" "$P/balances" | grep -q "2.50000000 BTC" || { echo "the balances page did not load"; exit 1; }

python3 bench/lib/sign_requests.py "$CLIENT_ID" "$SECRET" $((SECONDS_TO_RUN * 60000)) > "$OUT/headers.tsv"

echo "== direct: sandbox GET /api/balances, signed (${SECONDS_TO_RUN}s, ${CONNECTIONS} connections)"
WRK_THREADS=1 HEADERS_FILE="$OUT/headers.tsv" TARGET_PATH=/api/balances \
  wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_TO_RUN}s" -s bench/lib/signed.lua "http://127.0.0.1:$SANDBOX_PORT" \
  | tee "$OUT/direct.txt"
echo "== portal: GET /balances, signed in (${SECONDS_TO_RUN}s, ${CONNECTIONS} connections)"
wrk -t1 -c"$CONNECTIONS" -d"${SECONDS_TO_RUN}s" -H "Cookie: $COOKIE" -s bench/lib/report.lua "$P/balances" \
  | tee "$OUT/portal.txt"

python3 - "$OUT/direct.txt" "$OUT/portal.txt" <<'PY'
import sys
def read(path):
    out = {}
    for line in open(path):
        if ":" in line and line.split(":")[0] in ("throughput_rps", "latency_p50_ms", "latency_p99_ms"):
            k, v = line.split(":", 1)
            out[k] = float(v)
    return out
d, p = read(sys.argv[1]), read(sys.argv[2])
print("== summary (one run)")
print(f"direct  {d['throughput_rps']:8.0f} req/s  p50 {d['latency_p50_ms']:.3f} ms  p99 {d['latency_p99_ms']:.3f} ms")
print(f"portal  {p['throughput_rps']:8.0f} req/s  p50 {p['latency_p50_ms']:.3f} ms  p99 {p['latency_p99_ms']:.3f} ms")
print(f"portal/direct throughput {p['throughput_rps']/d['throughput_rps']:.2f}x; "
      f"p50 added {p['latency_p50_ms']-d['latency_p50_ms']:.3f} ms; p99 ratio {p['latency_p99_ms']/d['latency_p99_ms']:.2f}x")
PY
