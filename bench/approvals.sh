#!/usr/bin/env bash
# The approval gate under load: four makers and two approvers (members
# signed in through the forms with two-factor codes) on two release portal
# replicas sharing one database, against one release sandbox. Makers file
# payouts for SECONDS, approvers approve them in bulk, the replicas' job
# runners execute them; then prints executions/min, approval-to-execution
# p50/p95 and the payouts the sandbox holds (each executed exactly once).
# BIN_DIR=DIR runs the binaries (paydesk, paydesk-sandbox, approvals_load)
# found in DIR instead of building them: a build of another commit, for
# before and after on one machine.
# Usage: [BIN_DIR=DIR] bench/approvals.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_TO_RUN="${1:-30}"
SANDBOX_PORT=18092
PORTAL_PORTS=(18083 18084)
OUT=bench/results
mkdir -p "$OUT"
SERVER="${DATABASE_SERVER:-postgres://postgres@127.0.0.1:5432}"
DB="${BENCH_DB:-paydesk_bench_approvals}"
if [ -n "${BIN_DIR:-}" ]; then
  SANDBOX_BIN="$BIN_DIR/paydesk-sandbox" PORTAL_BIN="$BIN_DIR/paydesk" LOAD_BIN="$BIN_DIR/approvals_load"
else
  TARGET="${CARGO_TARGET_DIR:-target}"
  cargo build --release -q -p paydesk-sandbox -p paydesk --bins --example approvals_load
  SANDBOX_BIN="$TARGET/release/paydesk-sandbox" PORTAL_BIN="$TARGET/release/paydesk"
  LOAD_BIN="$TARGET/release/examples/approvals_load"
fi

CLIENT_ID=5d0c3b1e-7f3a-4c55-8a2b-1e9f0c7d4a11
SECRET=bench-secret-not-for-production
cat > "$OUT/approvals-fixture.json" <<JSON
{"companies": [{"name": "Bench Ltd",
  "balances": {"BTC": "250000000", "USDT": "1000000000000000", "USDC": "10000000000", "NGN": "5000000"},
  "clients": [{"client_id": "$CLIENT_ID", "client_secret": "$SECRET", "name": "bench"}]}]}
JSON

psql "$SERVER/postgres" -qc "DROP DATABASE IF EXISTS $DB" >/dev/null
KEY="$(head -c 32 /dev/urandom | base64)"
"$SANDBOX_BIN" --listen "127.0.0.1:$SANDBOX_PORT" --fixture "$OUT/approvals-fixture.json" \
  --workers 1 >"$OUT/approvals-sandbox.log" 2>&1 &
PIDS=($!)
trap 'kill "${PIDS[@]}" 2>/dev/null || true' EXIT
portal() { # port: a replica on the shared database
  PAYDESK_LISTEN="127.0.0.1:$1" DATABASE_URL="$SERVER/$DB" PAYDESK_BUILTIN_SANDBOX=false \
    PAYDESK_MASTER_KEY="$KEY" PAYDESK_DATA_DIR="$OUT/approvals-data-$1" RUST_LOG=warn \
    "$PORTAL_BIN" >"$OUT/approvals-portal-$1.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$1/healthz" >/dev/null && return
    sleep 0.1
  done
  echo "the portal on $1 did not start"; exit 1
}
# The first replica creates and migrates the database; then the second.
portal "${PORTAL_PORTS[0]}"
portal "${PORTAL_PORTS[1]}"

# Sign in as the first admin through the forms, then set up a tenant.
P="http://127.0.0.1:${PORTAL_PORTS[0]}"
JAR="$OUT/approvals-cookies.txt"; rm -f "$JAR"
token() { curl -s -c "$JAR" -b "$JAR" "$P$1" | grep -o 'name="csrf_token" value="[^"]*"' | head -1 | sed 's/.*value="//;s/"$//'; }
post() { local page=$1 path=$2; shift 2; curl -s -o /dev/null -c "$JAR" -b "$JAR" --data-urlencode "csrf_token=$(token "$page")" "$@" "$P$path"; }
ONE_TIME=$(grep 'One-time password' "$OUT/approvals-portal-${PORTAL_PORTS[0]}.log" | awk '{print $NF}')
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

# CPU the whole machine spends (every process: Postgres, both replicas,
# the sandbox, the load itself), in clock ticks; divided by the payouts
# executed it compares builds where executions a minute, on a saturated
# machine, only says how the CPU was shared.
busy() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
# Clock ticks the given processes spent, user and system (one that ended
# meanwhile is skipped).
ticks() { { cat $(printf '/proc/%s/stat ' "$@") 2>/dev/null || true; } | awk '{t += $14 + $15} END {print t + 0}'; }
echo "== load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
BUSY_BEFORE=$(busy)
PG_BEFORE=$(ticks $(pgrep -x postgres)) PORTALS_BEFORE=$(ticks "${PIDS[1]}" "${PIDS[2]}")
SANDBOX_BEFORE=$(ticks "${PIDS[0]}")
BENCH_PORTALS="http://127.0.0.1:${PORTAL_PORTS[0]},http://127.0.0.1:${PORTAL_PORTS[1]}" \
  DATABASE_URL="$SERVER/$DB" PAYDESK_MASTER_KEY="$KEY" BENCH_TENANT="Bench Co" BENCH_SECONDS="$SECONDS_TO_RUN" \
  SANDBOX_URL="http://127.0.0.1:$SANDBOX_PORT" SANDBOX_CLIENT_ID="$CLIENT_ID" SANDBOX_CLIENT_SECRET="$SECRET" \
  "$LOAD_BIN" | tee "$OUT/approvals.txt"
BUSY=$(( $(busy) - BUSY_BEFORE ))
# Postgres's backends that ended during the run are not counted: a share
# of it falls into "the rest".
PG=$(( $(ticks $(pgrep -x postgres)) - PG_BEFORE ))
PORTALS=$(( $(ticks "${PIDS[1]}" "${PIDS[2]}") - PORTALS_BEFORE ))
SANDBOX=$(( $(ticks "${PIDS[0]}") - SANDBOX_BEFORE ))
EXECUTED=$(sed -n 's/^executions: \([0-9]*\) in all.*/\1/p' "$OUT/approvals.txt")
awk -v b="$BUSY" -v pg="$PG" -v po="$PORTALS" -v sb="$SANDBOX" -v t="$(getconf CLK_TCK)" -v n="$EXECUTED" \
  'BEGIN {ms = 1000 / t / n
          printf "machine CPU: %.1f s for %d payouts = %.2f ms per payout\n", b / t, n, b * ms
          printf "  of which Postgres %.2f ms, the two portals %.2f ms, the sandbox %.2f ms, the rest %.2f ms\n",
                 pg * ms, po * ms, sb * ms, (b - pg - po - sb) * ms}'
echo "== load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
