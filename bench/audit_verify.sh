#!/usr/bin/env bash
# The audit verifier on a large export, and the cost of a signed checkpoint.
#
# Builds the release portal and the bundle generator
# (examples/audit_bundle.rs), writes a bundle of N records (one tenant's
# log, a signed checkpoint every 10,000 records and one at the head), times
# `paydesk audit verify` on it (wall time, CPU and peak memory from GNU
# time), then tampers one record in the middle and times the failing run.
# The generator also prints the Ed25519 signing time per checkpoint and,
# against a scratch database, the whole checkpoint (lock, head, insert).
# Usage: bench/audit_verify.sh [N]    (default 1000000)
set -euo pipefail
cd "$(dirname "$0")/.."

N="${1:-1000000}"
OUT=bench/results
mkdir -p "$OUT"
SERVER="${DATABASE_SERVER:-postgres://postgres@127.0.0.1:5432}"
BUNDLE="$OUT/audit-$N.jsonl"
BIN="${CARGO_TARGET_DIR:-target}/release"

cargo build --release -q -p paydesk --bin paydesk --example audit_bundle
DATABASE_URL="$SERVER/paydesk_bench_audit" "$BIN/examples/audit_bundle" "$N" "$BUNDLE"
ls -lh "$BUNDLE" | awk '{print "bundle size: " $5}'

timed() { /usr/bin/time -f "  %e s wall, %U s user, %M KB peak" "$@"; }
echo "verify (intact):"
timed "$BIN/paydesk" audit verify "$BUNDLE"
# One record in the middle edited: the verifier must name it and exit 1.
MIDDLE=$((N / 2))
sed "s/\"target\":\"POST \/api\/payouts\/$MIDDLE\"/\"target\":\"POST \/api\/payouts\/0\"/" "$BUNDLE" > "$OUT/audit-$N-edited.jsonl"
echo "verify (record $MIDDLE edited):"
if timed "$BIN/paydesk" audit verify "$OUT/audit-$N-edited.jsonl"; then
  echo "the edited bundle passed: the verifier is broken" >&2
  exit 1
fi
