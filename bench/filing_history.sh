#!/usr/bin/env bash
# What a filing's "first payment to this counterparty?" check costs as a
# tenant's history grows: the statement before (unnesting every executing
# or executed request of the tenant) against the one now (a probe of
# `paying_counterparties` per counterparty), on one database with N
# executed requests paying 5,000 accounts, each run R times.
# Usage: bench/filing_history.sh [N] [R]
set -euo pipefail
cd "$(dirname "$0")/.."

N="${1:-200000}"
R="${2:-20}"
SERVER="${DATABASE_SERVER:-postgres://postgres@127.0.0.1:5432}"
DB=paydesk_bench_history
psql "$SERVER/postgres" -qc "DROP DATABASE IF EXISTS $DB" -qc "CREATE DATABASE $DB" >/dev/null
for f in migrations/*.sql; do psql "$SERVER/$DB" -q -v ON_ERROR_STOP=1 -f "$f" >/dev/null; done

TENANT=7d0c1b0e-0000-4000-8000-000000000001
USER_ID=7d0c1b0e-0000-4000-8000-000000000002
psql "$SERVER/$DB" -q -v ON_ERROR_STOP=1 <<SQL
INSERT INTO tenants (id, name) VALUES ('$TENANT', 'History Ltd');
INSERT INTO users (id, email, display_name, password_hash) VALUES ('$USER_ID', 'maker@example.com', 'Maker', 'x');
INSERT INTO action_requests (id, tenant_id, kind, target, summary, payload, status, requested_by,
                             policy_version, required_approvals, upstream_reference, expires_at, counterparties)
SELECT gen_random_uuid(), '$TENANT', 'payout', 'payout:' || i, 'Payout ' || i, '{}', 'executed', '$USER_ID',
       1, 1, 'ref-' || i, now(), ARRAY['account:NG:' || lpad((i % 5000)::text, 10, '0')]
FROM generate_series(1, $N) AS i;
ANALYZE;
SQL

KEYS="ARRAY['account:NG:0000000042', 'account:NG:9999999999']"
BEFORE="SELECT DISTINCT k FROM action_requests, unnest(counterparties) AS k
        WHERE tenant_id = '$TENANT' AND status IN ('executing', 'executed') AND k = ANY($KEYS)"
AFTER="SELECT DISTINCT k FROM unnest($KEYS::text[]) AS k
       CROSS JOIN LATERAL (SELECT 1 FROM paying_counterparties p WHERE p.tenant_id = '$TENANT' AND p.key = k LIMIT 1) paid"

# Median of R runs of the statement's execution time as Postgres reports it.
median_ms() {
  for _ in $(seq 1 "$R"); do
    psql "$SERVER/$DB" -Atc "EXPLAIN (ANALYZE, TIMING OFF) $1" | sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p'
  done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

echo "executed requests: $N; runs each: $R"
echo "answer before: $(psql "$SERVER/$DB" -Atc "$BEFORE" | tr '\n' ' ')"
echo "answer after:  $(psql "$SERVER/$DB" -Atc "$AFTER" | tr '\n' ' ')"
echo "before: median $(median_ms "$BEFORE") ms"
echo "after:  median $(median_ms "$AFTER") ms"
echo "plan after:"
psql "$SERVER/$DB" -Atc "EXPLAIN $AFTER"
