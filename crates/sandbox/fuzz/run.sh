#!/usr/bin/env bash
# Fuzzes the sandbox from its own /openapi.json with schemathesis: a fresh
# sandbox on 127.0.0.1 with fuzz/fixture.json, every request signed by
# hooks.py, bounded to FUZZ_MAX_EXAMPLES cases per operation and
# FUZZ_MAX_TIME seconds. Fails on any server error, any answer outside its
# documented schema and any undocumented status. CI runs it as is.
#
# Environment: SANDBOX_BIN (default: cargo builds it), FUZZ_VENV (where
# schemathesis is installed, default target/fuzz-venv), FUZZ_MAX_EXAMPLES,
# FUZZ_MAX_TIME, FUZZ_SEED.
set -euo pipefail
fuzz_dir="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$fuzz_dir/../../.." && pwd)"
target_dir="${CARGO_TARGET_DIR:-$root/target}"

SCHEMATHESIS_VERSION=4.32.5
venv="${FUZZ_VENV:-$target_dir/fuzz-venv}"
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -qF "$SCHEMATHESIS_VERSION"; then
  echo "fuzz: installing schemathesis $SCHEMATHESIS_VERSION into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

if [ -z "${SANDBOX_BIN:-}" ]; then
  (cd "$root" && cargo build --quiet --locked -p paydesk-sandbox --bin paydesk-sandbox)
  SANDBOX_BIN="$target_dir/debug/paydesk-sandbox"
fi

# A free port, so a developer's own sandbox on 8090 is not in the way.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
# Schemathesis keeps a cache in its working directory: a scratch one.
work=$(mktemp -d)
"$SANDBOX_BIN" --listen "127.0.0.1:$port" --fixture "$fuzz_dir/fixture.json" --workers 2 >"$work/sandbox.log" 2>&1 &
sandbox_pid=$!
trap 'kill "$sandbox_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 50); do
  curl -fsS "$base/healthz" >/dev/null 2>&1 && break
  sleep 0.2
done
curl -fsS "$base/healthz" >/dev/null || { echo "fuzz: the sandbox did not start"; cat "$work/sandbox.log"; exit 1; }

# The fixture's only client. POST /sandbox/faults is left out: its whole
# point is to make the next calls fail with 500, 503 or a timeout.
export FUZZ_CLIENT_ID=cccccccc-cccc-4ccc-8ccc-cccccccccccc
export FUZZ_CLIENT_SECRET=secret-fuzz-0123456789
export SCHEMATHESIS_HOOKS="$fuzz_dir/hooks.py"
started=$(date +%s)
status=0
cd "$work"
# One worker: schemathesis's workers are threads, and CPython 3.11 can
# fail parsing source in two threads at once (hypothesis parses lambdas to
# name them), which ends a run with "AST constructor recursion depth
# mismatch" though the sandbox did nothing wrong.
"$venv/bin/schemathesis" run "$base/openapi.json" \
  --checks not_a_server_error,response_schema_conformance,status_code_conformance \
  --exclude-operation-id SandboxAddFault \
  --phases examples,coverage,fuzzing,stateful \
  --max-examples "${FUZZ_MAX_EXAMPLES:-10}" \
  --max-time "${FUZZ_MAX_TIME:-90}" \
  --seed "${FUZZ_SEED:-16}" \
  --workers 1 \
  --generation-with-security-parameters false \
  --generation-database none \
  --request-timeout 30 \
  --no-color 2>&1 | tee "$work/schemathesis.log" || status=$?
# Every request is signed, so a 401 means the signing broke and the run
# tested the gatekeeper alone, which the checks above would not notice.
if grep -Eq 'by status( |.*, )401: ' "$work/schemathesis.log"; then
  echo "fuzz: requests were refused as unauthenticated (401): check hooks.py"
  status=1
fi
echo "fuzz: $(($(date +%s) - started)) s, exit status $status"
if [ "$status" -ne 0 ]; then
  echo "fuzz: the sandbox's log ends:"
  tail -n 50 "$work/sandbox.log"
fi
exit "$status"
