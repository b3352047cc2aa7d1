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
ONE_TIME=$(grep 'One-time password' "$OUT/portal.log" | awk '{print $NF}')
post /login /login --data-urlencode "email=admin@paydesk.local" --data-urlencode "password=$ONE_TIME"
post /account/password /account/password --data-urlencode "current_password=$ONE_TIME" \
  --data-urlencode "new_password=bench-password-123" --data-urlencode "confirm_password=bench-password-123"
# The admin's role requires two-factor: enrol with a code computed here.
SECRET_2FA=$(curl -s -c "$JAR" -b "$JAR" --data-urlencode "csrf_token=$(token /account/security)" \
  "$P/account/security/two-factor" | grep -o '<code class="totp-secret">[^<]*' | sed 's/.*>//')
post /account/security /account/security/two-factor/confirm --data-urlencode "code=$(python3 bench/lib/totp.py "$SECRET_2FA")"
post /account/password /platform/tenants --data-urlencode "name=Bench Co"
post /platform /platform/allowlist --data-urlencode "base_url=http://127.0.0.1:$SANDBOX_PORT"
post /connections /connections --data-urlencode "name=Bench sandbox" --data-urlencode "environment=sandbox" \
  --data-urlencode "base_url=http://127.0.0.1:$SANDBOX_PORT" --data-urlencode "client_id=$CLIENT_ID" \
  --data-urlencode "client_secret=$SECRET"
COOKIE="paydesk_session=$(awk '$6 == "paydesk_session" {print $7}' "$JAR")"
curl -sf -H "Cookie: $COOKIE" "$P/balances" | grep -q "2.50000000 BTC" || { echo "the balances page did not load"; exit 1; }

python3 bench/lib/sign_requests.py "$CLIENT_ID" "$SECRET" $((SECONDS_TO_RUN * 80000)) > "$OUT/headers.tsv"

# Latency is compared at one connection (no queueing); throughput at
# $CONNECTIONS connections. Both targets see the same sandbox process.
run_direct() { # connections seconds file
  WRK_THREADS=1 HEADERS_FILE="$OUT/headers.tsv" TARGET_PATH=/api/balances \
    wrk -t1 -c"$1" -d"$2s" -s bench/lib/signed.lua "http://127.0.0.1:$SANDBOX_PORT" | tee "$3"
}
run_portal() {
  wrk -t1 -c"$1" -d"$2s" -H "Cookie: $COOKIE" -s bench/lib/report.lua "$P/balances" | tee "$3"
}
LIGHT=$(( SECONDS_TO_RUN / 2 > 3 ? SECONDS_TO_RUN / 2 : 3 ))
echo "== direct, 1 connection";  run_direct 1 "$LIGHT" "$OUT/direct-1.txt"
echo "== portal, 1 connection";  run_portal 1 "$LIGHT" "$OUT/portal-1.txt"
# The headers file hands out each nonce once; sign afresh for the next run.
python3 bench/lib/sign_requests.py "$CLIENT_ID" "$SECRET" $((SECONDS_TO_RUN * 80000)) > "$OUT/headers.tsv"
echo "== direct, $CONNECTIONS connections"; run_direct "$CONNECTIONS" "$SECONDS_TO_RUN" "$OUT/direct-n.txt"
echo "== portal, $CONNECTIONS connections"; run_portal "$CONNECTIONS" "$SECONDS_TO_RUN" "$OUT/portal-n.txt"

python3 - "$OUT" "$CONNECTIONS" <<'PY'
import sys
out, n = sys.argv[1], sys.argv[2]
def read(name):
    vals = {}
    for line in open(f"{out}/{name}.txt"):
        key = line.split(":")[0]
        if key in ("throughput_rps", "latency_p50_ms", "latency_p99_ms"):
            vals[key] = float(line.split(":", 1)[1])
    return vals
d1, p1, dn, pn = read("direct-1"), read("portal-1"), read("direct-n"), read("portal-n")
print("== summary (one run)")
for label, v in (("direct, 1 conn", d1), ("portal, 1 conn", p1), (f"direct, {n} conn", dn), (f"portal, {n} conn", pn)):
    print(f"{label:16} {v['throughput_rps']:8.0f} req/s  p50 {v['latency_p50_ms']:7.3f} ms  p99 {v['latency_p99_ms']:7.3f} ms")
print(f"portal adds {p1['latency_p50_ms'] - d1['latency_p50_ms']:.3f} ms at p50 (1 connection); "
      f"p50 ratio {p1['latency_p50_ms'] / d1['latency_p50_ms']:.2f}x")
print(f"portal serves {pn['throughput_rps']:.0f} balance pages/s at {n} connections; "
      f"throughput ratio portal/direct {pn['throughput_rps'] / dn['throughput_rps']:.3f}")
PY
