#!/usr/bin/env bash
# What a filing's reads of the tenant's history cost as it grows, each
# statement before against the one now, on one database with N executed
# requests paying 5,000 accounts, filed by two members over the last 24
# hours, each statement run R times:
# - "first payment to this counterparty?": unnesting every executing or
#   executed request of the tenant, against a probe of
#   `paying_counterparties` per counterparty;
# - the policy period's running totals (24 hours): summing every request
#   of the period, against the per-hour `request_totals` and the period's
#   first, partial hour (`approvals::store::running_totals`).
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
OTHER_ID=7d0c1b0e-0000-4000-8000-000000000003
psql "$SERVER/$DB" -q -v ON_ERROR_STOP=1 <<SQL
INSERT INTO tenants (id, name) VALUES ('$TENANT', 'History Ltd');
INSERT INTO users (id, email, display_name, password_hash) VALUES ('$USER_ID', 'maker@example.com', 'Maker', 'x'),
  ('$OTHER_ID', 'other@example.com', 'Other', 'x');
INSERT INTO action_requests (id, tenant_id, kind, target, summary, payload, status, requested_by,
                             policy_version, required_approvals, upstream_reference, expires_at, counterparties,
                             value, created_at)
SELECT gen_random_uuid(), '$TENANT', 'payout', 'payout:' || i, 'Payout ' || i, '{}', 'executed',
       CASE WHEN i % 2 = 0 THEN '$USER_ID'::uuid ELSE '$OTHER_ID'::uuid END,
       1, 1, 'ref-' || i, now(), ARRAY['account:NG:' || lpad((i % 5000)::text, 10, '0')],
       i % 1000, now() - ((i * 37) % 86400) * interval '1 second'
FROM generate_series(1, $N) AS i;
-- The load's one statement updated each hour's totals thousands of times;
-- filings, one transaction each, leave no such pile of dead versions.
VACUUM ANALYZE;
SQL

KEYS="ARRAY['account:NG:0000000042', 'account:NG:9999999999']"
BEFORE="SELECT DISTINCT k FROM action_requests, unnest(counterparties) AS k
        WHERE tenant_id = '$TENANT' AND status IN ('executing', 'executed') AND k = ANY($KEYS)"
AFTER="SELECT DISTINCT k FROM unnest($KEYS::text[]) AS k
       CROSS JOIN LATERAL (SELECT 1 FROM paying_counterparties p WHERE p.tenant_id = '$TENANT' AND p.key = k LIMIT 1) paid"

SINCE="now() - interval '24 hours'"
TOTALS_BEFORE="SELECT COALESCE(sum(value) FILTER (WHERE requested_by = '$USER_ID'), 0), COALESCE(sum(value), 0)
       FROM action_requests WHERE tenant_id = '$TENANT' AND kind = 'payout' AND created_at >= $SINCE
         AND status NOT IN ('rejected', 'cancelled', 'expired', 'failed')"
# The statement of approvals::store::running_totals, its parameters written in.
TOTALS_AFTER="SELECT COALESCE(sum(value) FILTER (WHERE requested_by = '$USER_ID'), 0), COALESCE(sum(value), 0)
       FROM (SELECT requested_by, value FROM request_totals
             WHERE tenant_id = '$TENANT' AND kind = 'payout' AND hour >= date_trunc('hour', $SINCE, 'UTC') + interval '1 hour'
             UNION ALL
             SELECT requested_by, request_counts(status, value) FROM action_requests
             WHERE tenant_id = '$TENANT' AND kind = 'payout' AND created_at >= $SINCE
               AND created_at < date_trunc('hour', $SINCE, 'UTC') + interval '1 hour') counted"

# Median of R runs of the statement's execution time as Postgres reports it.
median_ms() {
  for _ in $(seq 1 "$R"); do
    psql "$SERVER/$DB" -Atc "EXPLAIN (ANALYZE, TIMING OFF) $1" | sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p'
  done | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'
}

# compare NAME BEFORE AFTER: both statements' answers, medians and the plan now.
compare() {
  echo "$1, answer before: $(psql "$SERVER/$DB" -Atc "$2" | tr '\n' ' ')"
  echo "$1, answer after:  $(psql "$SERVER/$DB" -Atc "$3" | tr '\n' ' ')"
  echo "$1, before: median $(median_ms "$2") ms"
  echo "$1, after:  median $(median_ms "$3") ms"
  echo "$1, plan after:"
  psql "$SERVER/$DB" -Atc "EXPLAIN $3"
  echo
}

echo "executed requests: $N; runs each: $R"
compare "first payment" "$BEFORE" "$AFTER"
compare "running totals" "$TOTALS_BEFORE" "$TOTALS_AFTER"
