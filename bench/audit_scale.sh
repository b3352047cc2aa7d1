#!/usr/bin/env bash
# The audit log at scale: loads N records (default 1,000,000; also run it
# at 10,000,000) with a correct chain into a fresh database, then measures
# the portal's own audit code on the largest tenant's log (70% of them):
# every search shape of the audit page (p50/p95 over repeated runs, then
# each query's EXPLAIN (ANALYZE, BUFFERS) from auto_explain), "verify
# chain", and the CSV export (at most 1,000,000 records) with its peak
# memory. See examples/audit_scale.rs.
# Usage: bench/audit_scale.sh [N] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."

N="${1:-1000000}"
ROUNDS="${2:-30}"
SERVER="${DATABASE_SERVER:-postgres://postgres@127.0.0.1:5432}"
DB="${BENCH_DB:-paydesk_bench_audit_scale}"
OUT=bench/results
mkdir -p "$OUT"
BIN="${CARGO_TARGET_DIR:-target}/release/examples/audit_scale"
export DATABASE_URL="$SERVER/$DB"

cargo build --release -q -p paydesk --example audit_scale
psql -q "$SERVER/postgres" -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
"$BIN" load "$N"
psql -q "$DATABASE_URL" -c "VACUUM ANALYZE audit_log"
"$BIN" search "$ROUNDS" | tee "$OUT/audit-scale-$N-search.txt" | sed '/^-- plan/,$d'
echo "(plans in $OUT/audit-scale-$N-search.txt)"
"$BIN" verify
/usr/bin/time -f "  %e s wall, %U s user, %M KB peak" "$BIN" export
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
