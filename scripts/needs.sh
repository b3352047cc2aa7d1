# What the tests need, made ready: sourced by scripts/test and .ci/run.
# Each step does nothing when the part is already there.

# Postgres: start the local cluster if it is installed but down, install it
# if it is missing.
ensure_postgres() {
  if pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; then
    return 0
  fi
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    echo "test: installing PostgreSQL"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  fi
  local version
  version=$(ls /etc/postgresql | sort -V | tail -n1)
  if ! pg_lsclusters -h | grep -q "^$version main"; then
    pg_createcluster "$version" main >/dev/null
  fi
  pg_ctlcluster --skip-systemctl-redirect "$version" main start || true
  # Waiting on the server coming up, bounded to 30 checks.
  for _ in $(seq 1 30); do
    pg_isready -h 127.0.0.1 -p 5432 -q && break
    sleep 1
  done
  pg_isready -h 127.0.0.1 -p 5432 || { echo "test: PostgreSQL did not start"; exit 1; }
}

# Each portal test makes its own database; drop those of earlier runs.
drop_test_databases() {
  psql -h 127.0.0.1 -U postgres -d postgres -Atqc \
    "SELECT datname FROM pg_database WHERE datname LIKE 'paydesk\_test\_%'" 2>/dev/null |
    while read -r db; do
      psql -h 127.0.0.1 -U postgres -d postgres -qc "DROP DATABASE IF EXISTS \"$db\"" >/dev/null 2>&1 || true
    done
}

# Browser tests drive Debian's Chromium through chromedriver.
ensure_browser() {
  if ! command -v chromedriver >/dev/null 2>&1 || ! command -v chromium >/dev/null 2>&1; then
    echo "test: installing chromium and chromium-driver"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
  fi
}
