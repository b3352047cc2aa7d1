#!/usr/bin/env bash
# What a change to the portal costs, in one run: the release portal built at
# BEFORE (a git ref) and at the working tree, each on its own fresh
# database, against one release sandbox; their balances pages driven with
# wrk in turn (one connection for latency, CONNECTIONS for throughput),
# twice each, alternating, so a noisy machine hits both alike.
# Usage: bench/portal_before_after.sh BEFORE [SECONDS] [CONNECTIONS]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

BEFORE="${1:?name the git ref to compare with, e.g. HEAD~5}"
SECONDS_TO_RUN="${2:-10}"
CONNECTIONS="${3:-32}"
SANDBOX_PORT=18090
OUT=bench/results
mkdir -p "$OUT"
SERVER="${DATABASE_SERVER:-postgres://postgres@127.0.0.1:5432}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"

command -v wrk >/dev/null || { apt-get update -qq && apt-get install -y -qq wrk >/dev/null; }

# Both builds share the target directory, so shared dependencies build once.
WORKTREE=$(mktemp -d /tmp/paydesk-before.XXXXXX)
git worktree add --detach "$WORKTREE" "$BEFORE" >/dev/null
trap 'git worktree remove --force "$WORKTREE" >/dev/null 2>&1 || true' EXIT
(cd "$WORKTREE" && cargo build --release -q -p paydesk)
cp "$CARGO_TARGET_DIR/release/paydesk" "$OUT/paydesk-before"
cargo build --release -q -p paydesk-sandbox -p paydesk
cp "$CARGO_TARGET_DIR/release/paydesk" "$OUT/paydesk-after"

CLIENT_ID=3f1e0c52-8a8e-4c3b-9d2a-6b7f1a2c9e01
SECRET=bench-secret-not-for-production
cat > "$OUT/fixture.json" <<JSON
{"companies": [{"name": "Bench Ltd",
  "balances": {"BTC": "250000000", "USDT": "10000000000", "USDC": "10000000000", "NGN": "5000000"},
  "clients": [{"client_id": "$CLIENT_ID", "client_secret": "$SECRET", "name": "bench"}]}]}
JSON
"$CARGO_TARGET_DIR/release/paydesk-sandbox" --listen "127.0.0.1:$SANDBOX_PORT" --fixture "$OUT/fixture.json" \
  --workers 1 >"$OUT/sandbox.log" 2>&1 &
PIDS=($!)
trap 'kill "${PIDS[@]}" 2>/dev/null || true; git worktree remove --force "$WORKTREE" >/dev/null 2>&1 || true' EXIT

# Starts one portal binary on a fresh database, signs in through its forms
# like a browser, connects a tenant to the sandbox; its session cookie goes
# to $OUT/cookie-NAME.
start_portal() { # name port
  local name=$1 port=$2 db="paydesk_bench_$1" p="http://127.0.0.1:$2" jar="$OUT/cookies-$1.txt"
  psql "$SERVER/postgres" -qc "DROP DATABASE IF EXISTS $db" >/dev/null
  PAYDESK_LISTEN="127.0.0.1:$port" DATABASE_URL="$SERVER/$db" PAYDESK_BUILTIN_SANDBOX=false \
    PAYDESK_MASTER_KEY="$(head -c 32 /dev/urandom | base64)" RUST_LOG=warn \
    "$OUT/paydesk-$name" >"$OUT/portal-$name.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do curl -sf "$p/healthz" >/dev/null && break; sleep 0.1; done
  rm -f "$jar"
  token() { curl -s -c "$jar" -b "$jar" "$p$1" | grep -o 'name="csrf_token" value="[^"]*"' | head -1 | sed 's/.*value="//;s/"$//'; }
  post() { local page=$1 path=$2; shift 2; curl -s -o /dev/null -c "$jar" -b "$jar" --data-urlencode "csrf_token=$(token "$page")" "$@" "$p$path"; }
  local one_time
  one_time=$(grep 'One-time password' "$OUT/portal-$name.log" | awk '{print $NF}')
  post /login /login --data-urlencode "email=admin@paydesk.local" --data-urlencode "password=$one_time"
  post /account/password /account/password --data-urlencode "current_password=$one_time" \
    --data-urlencode "new_password=bench-password-123" --data-urlencode "confirm_password=bench-password-123"
  # The admin's role requires two-factor: enrol with a code computed here.
  local secret_2fa
  secret_2fa=$(curl -s -c "$jar" -b "$jar" --data-urlencode "csrf_token=$(token /account/security)" \
    "$p/account/security/two-factor" | grep -o '<code class="totp-secret">[^<]*' | sed 's/.*>//')
  post /account/security /account/security/two-factor/confirm --data-urlencode "code=$(python3 bench/lib/totp.py "$secret_2fa")"
  post /account/password /platform/tenants --data-urlencode "name=Bench Co"
  post /platform /platform/allowlist --data-urlencode "base_url=http://127.0.0.1:$SANDBOX_PORT"
  post /connections /connections --data-urlencode "name=Bench sandbox" --data-urlencode "environment=sandbox" \
    --data-urlencode "base_url=http://127.0.0.1:$SANDBOX_PORT" --data-urlencode "client_id=$CLIENT_ID" \
    --data-urlencode "client_secret=$SECRET"
  local cookie="paydesk_session=$(awk '$6 == "paydesk_session" {print $7}' "$jar")"
  curl -sf -H "Cookie: $cookie" "$p/balances" | grep -q "2.50000000 BTC" || { echo "$name: the balances page did not load" >&2; exit 1; }
  echo "$cookie" >"$OUT/cookie-$name"
}
for _ in $(seq 1 100); do curl -sf "http://127.0.0.1:$SANDBOX_PORT/healthz" >/dev/null && break; sleep 0.1; done
start_portal before 18081
start_portal after 18082
COOKIE_BEFORE=$(cat "$OUT/cookie-before")
COOKIE_AFTER=$(cat "$OUT/cookie-after")

run() { # name port cookie connections seconds round
  wrk -t1 -c"$4" -d"$5s" -H "Cookie: $3" -s bench/lib/report.lua "http://127.0.0.1:$2/balances" >"$OUT/$1-$4-$6.txt"
}
LIGHT=$(( SECONDS_TO_RUN / 2 > 3 ? SECONDS_TO_RUN / 2 : 3 ))
for round in 1 2; do
  echo "== round $round"
  run before 18081 "$COOKIE_BEFORE" 1 "$LIGHT" "$round"
  run after 18082 "$COOKIE_AFTER" 1 "$LIGHT" "$round"
  run before 18081 "$COOKIE_BEFORE" "$CONNECTIONS" "$SECONDS_TO_RUN" "$round"
  run after 18082 "$COOKIE_AFTER" "$CONNECTIONS" "$SECONDS_TO_RUN" "$round"
done

python3 - "$OUT" "$CONNECTIONS" "$BEFORE" <<'PY'
import sys
out, n, before = sys.argv[1], sys.argv[2], sys.argv[3]
def read(name):
    vals = {}
    for line in open(f"{out}/{name}.txt"):
        key = line.split(":")[0]
        if key in ("throughput_rps", "latency_p50_ms", "latency_p99_ms"):
            vals[key] = float(line.split(":", 1)[1])
    return vals
def mean(name, conns, key):
    return sum(read(f"{name}-{conns}-{r}")[key] for r in (1, 2)) / 2
print(f"== summary (one run, two rounds each; before = {before})")
for conns in ("1", n):
    b_rps, a_rps = mean("before", conns, "throughput_rps"), mean("after", conns, "throughput_rps")
    b_p50, a_p50 = mean("before", conns, "latency_p50_ms"), mean("after", conns, "latency_p50_ms")
    b_p99, a_p99 = mean("before", conns, "latency_p99_ms"), mean("after", conns, "latency_p99_ms")
    print(f"{conns:>3} conn  before {b_rps:8.0f} pages/s p50 {b_p50:7.3f} ms p99 {b_p99:7.3f} ms | "
          f"after {a_rps:8.0f} pages/s p50 {a_p50:7.3f} ms p99 {a_p99:7.3f} ms | "
          f"throughput after/before {a_rps / b_rps:.2f}, p50 after/before {a_p50 / b_p50:.2f}")
PY
