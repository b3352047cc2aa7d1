#!/usr/bin/env bash
# The portal's balances page against the same signed call made directly to
# the sandbox, in one run: requests/s, p50, p99 and the ratios.
#
# Starts the release sandbox (known credentials, one worker) and the release
# portal with a fresh database, signs in through the real forms, connects a
# tenant to the sandbox, then drives both with wrk. With BASE_BIN=PATH (a
# portal binary built from an earlier commit) that portal runs too, on its
# own database, and each measurement takes both in turn: before and after
# from one run. BIN_DIR=DIR runs the binaries in DIR instead of building.
# Usage: [BIN_DIR=DIR] [BASE_BIN=PATH] bench/portal_balances.sh [SECONDS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_TO_RUN="${1:-10}"
CONNECTIONS="${2:-32}"
SANDBOX_PORT=18090
PORTAL_PORT=18081
OUT=bench/results
mkdir -p "$OUT"
SERVER="${DATABASE_SERVER:-postgres://postgres@127.0.0.1:5432}"

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }
if [ -z "${BIN_DIR:-}" ]; then
  cargo build --release -q -p paydesk-sandbox -p paydesk
  BIN_DIR="${CARGO_TARGET_DIR:-target}/release"
fi

CLIENT_ID=3f1e0c52-8a8e-4c3b-9d2a-6b7f1a2c9e01
SECRET=bench-secret-not-for-production
cat > "$OUT/fixture.json" <<JSON
{"companies": [{"name": "Bench Ltd",
  "balances": {"BTC": "250000000", "USDT": "10000000000", "USDC": "10000000000", "NGN": "5000000"},
  "clients": [{"client_id": "$CLIENT_ID", "client_secret": "$SECRET", "name": "bench"}]}]}
JSON

"$BIN_DIR/paydesk-sandbox" --listen "127.0.0.1:$SANDBOX_PORT" --fixture "$OUT/fixture.json" --workers 1 >"$OUT/sandbox.log" 2>&1 &
PIDS=($!)
trap 'kill "${PIDS[@]}" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$SANDBOX_PORT/healthz" >/dev/null && break; sleep 0.1; done

# Starts a portal binary on its own fresh database, signs in through the
# real forms like a browser (the admin's role requires two-factor: enrol
# with a code computed here), connects a tenant; its session cookie goes to
# $OUT/cookie-NAME.
start_portal() { # name port binary
  local name=$1 port=$2 bin=$3 db="paydesk_bench_$1" P="http://127.0.0.1:$2" JAR="$OUT/cookies-$1.txt"
  psql "$SERVER/postgres" -qc "DROP DATABASE IF EXISTS $db" >/dev/null
  PAYDESK_LISTEN="127.0.0.1:$port" DATABASE_URL="$SERVER/$db" PAYDESK_BUILTIN_SANDBOX=false \
    PAYDESK_MASTER_KEY="$(head -c 32 /dev/urandom | base64)" RUST_LOG=warn \
    "$bin" >"$OUT/portal-$name.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do curl -sf "$P/healthz" >/dev/null && break; sleep 0.1; done
  rm -f "$JAR"
  token() { curl -s -c "$JAR" -b "$JAR" "$P$1" | grep -o 'name="csrf_token" value="[^"]*"' | head -1 | sed 's/.*value="//;s/"$//'; }
  post() { local page=$1 path=$2; shift 2; curl -s -o /dev/null -c "$JAR" -b "$JAR" --data-urlencode "csrf_token=$(token "$page")" "$@" "$P$path"; }
  local one_time secret_2fa
  one_time=$(grep 'One-time password' "$OUT/portal-$name.log" | awk '{print $NF}')
  post /login /login --data-urlencode "email=admin@paydesk.local" --data-urlencode "password=$one_time"
  post /account/password /account/password --data-urlencode "current_password=$one_time" \
    --data-urlencode "new_password=bench-password-123" --data-urlencode "confirm_password=bench-password-123"
  secret_2fa=$(curl -s -c "$JAR" -b "$JAR" --data-urlencode "csrf_token=$(token /account/security)" \
    "$P/account/security/two-factor" | grep -o '<code class="totp-secret">[^<]*' | sed 's/.*>//')
  post /account/security /account/security/two-factor/confirm --data-urlencode "code=$(python3 bench/lib/totp.py "$secret_2fa")"
  post /account/password /platform/tenants --data-urlencode "name=Bench Co"
  post /platform /platform/allowlist --data-urlencode "base_url=http://127.0.0.1:$SANDBOX_PORT"
  post /connections /connections --data-urlencode "name=Bench sandbox" --data-urlencode "environment=sandbox" \
    --data-urlencode "base_url=http://127.0.0.1:$SANDBOX_PORT" --data-urlencode "client_id=$CLIENT_ID" \
    --data-urlencode "client_secret=$SECRET"
  local cookie="paydesk_session=$(awk '$6 == "paydesk_session" {print $7}' "$JAR")"
  curl -sf -H "Cookie: $cookie" "$P/balances" | grep -q "2.50000000 BTC" || { echo "$name: the balances page did not load" >&2; exit 1; }
  echo "$cookie" >"$OUT/cookie-$name"
}
PORTALS=(after)
start_portal after "$PORTAL_PORT" "$BIN_DIR/paydesk"
COOKIE_after=$(cat "$OUT/cookie-after")
if [ -n "${BASE_BIN:-}" ]; then
  PORTALS=(before after)
  start_portal before $((PORTAL_PORT + 1)) "$BASE_BIN"
  COOKIE_before=$(cat "$OUT/cookie-before")
fi
port_of() { if [ "$1" = before ]; then echo $((PORTAL_PORT + 1)); else echo "$PORTAL_PORT"; fi; }

python3 bench/lib/sign_requests.py "$CLIENT_ID" "$SECRET" $((SECONDS_TO_RUN * 80000)) > "$OUT/headers.tsv"

# Latency is compared at one connection (no queueing); throughput at
# $CONNECTIONS connections. Both targets see the same sandbox process.
run_direct() { # connections seconds file
  WRK_THREADS=1 HEADERS_FILE="$OUT/headers.tsv" TARGET_PATH=/api/balances \
    wrk -t1 -c"$1" -d"$2s" -s bench/lib/signed.lua "http://127.0.0.1:$SANDBOX_PORT" | tee "$3"
}
run_portal() { # name connections seconds file
  wrk -t1 -c"$2" -d"$3s" -H "Cookie: $(eval echo "\$COOKIE_$1")" -s bench/lib/report.lua \
    "http://127.0.0.1:$(port_of "$1")/balances" | tee "$4"
}
LIGHT=$(( SECONDS_TO_RUN / 2 > 3 ? SECONDS_TO_RUN / 2 : 3 ))
echo "== direct, 1 connection";  run_direct 1 "$LIGHT" "$OUT/direct-1.txt"
for name in "${PORTALS[@]}"; do
  echo "== portal ($name), 1 connection"; run_portal "$name" 1 "$LIGHT" "$OUT/portal-$name-1.txt"
done
# The headers file hands out each nonce once; sign afresh for the next run.
python3 bench/lib/sign_requests.py "$CLIENT_ID" "$SECRET" $((SECONDS_TO_RUN * 80000)) > "$OUT/headers.tsv"
echo "== direct, $CONNECTIONS connections"; run_direct "$CONNECTIONS" "$SECONDS_TO_RUN" "$OUT/direct-n.txt"
for name in "${PORTALS[@]}"; do
  echo "== portal ($name), $CONNECTIONS connections"
  run_portal "$name" "$CONNECTIONS" "$SECONDS_TO_RUN" "$OUT/portal-$name-n.txt"
done
echo "== load average: $(cut -d' ' -f1-3 /proc/loadavg)"

python3 - "$OUT" "$CONNECTIONS" "${PORTALS[@]}" <<'PY'
import sys
out, n, names = sys.argv[1], sys.argv[2], sys.argv[3:]
def read(name):
    vals = {}
    for line in open(f"{out}/{name}.txt"):
        key = line.split(":")[0]
        if key in ("throughput_rps", "latency_p50_ms", "latency_p99_ms"):
            vals[key] = float(line.split(":", 1)[1])
    return vals
d1, dn = read("direct-1"), read("direct-n")
print("== summary (one run)")
rows = [("direct, 1 conn", d1), (f"direct, {n} conn", dn)]
for name in names:
    rows += [(f"{name}, 1 conn", read(f"portal-{name}-1")), (f"{name}, {n} conn", read(f"portal-{name}-n"))]
for label, v in rows:
    print(f"{label:18} {v['throughput_rps']:8.0f} req/s  p50 {v['latency_p50_ms']:7.3f} ms  p99 {v['latency_p99_ms']:7.3f} ms")
for name in names:
    p1, pn = read(f"portal-{name}-1"), read(f"portal-{name}-n")
    print(f"{name}: portal adds {p1['latency_p50_ms'] - d1['latency_p50_ms']:.3f} ms at p50 (1 connection); "
          f"{pn['throughput_rps']:.0f} balance pages/s at {n} connections, "
          f"{pn['throughput_rps'] / dn['throughput_rps']:.3f} of direct")
PY
