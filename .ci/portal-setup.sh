#!/usr/bin/env bash
# Portal test prerequisites (run as root, idempotent, non-interactive): Debian's PostgreSQL started on loopback
# with a test user and database, and Debian's chromium for the Playwright browser tests.
# Writes the test database URL to /tmp/stableval_test_postgres_url, which tests/portal reads
# (the environment variable STABLEVAL_TEST_POSTGRES_URL, when set, wins).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
URL_FILE=/tmp/stableval_test_postgres_url
USER_NAME=stableval
PASSWORD=stableval-test
DB_NAME=stableval_test

need=()
command -v pg_ctlcluster >/dev/null 2>&1 || need+=(postgresql)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if ((${#need[@]})); then
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
if ! pg_lsclusters -h | grep -q "^${version} main"; then
    pg_createcluster "$version" main >/dev/null
fi
conf=/etc/postgresql/${version}/main/postgresql.conf
grep -q "^listen_addresses = '127.0.0.1'" "$conf" || echo "listen_addresses = '127.0.0.1'" >>"$conf"
if ! pg_lsclusters -h | awk -v v="$version" '$1==v && $2=="main" {print $4}' | grep -q online; then
    pg_ctlcluster "$version" main start
fi
for _ in $(seq 1 30); do
    su postgres -c "pg_isready -q -h 127.0.0.1 -p 5432" && break
    sleep 0.5
done
su postgres -c "psql -q -v ON_ERROR_STOP=1" <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${USER_NAME}') THEN
    CREATE ROLE ${USER_NAME} LOGIN PASSWORD '${PASSWORD}';
  END IF;
END \$\$;
SQL
if ! su postgres -c "psql -tAc \"SELECT 1 FROM pg_database WHERE datname='${DB_NAME}'\"" | grep -q 1; then
    su postgres -c "createdb -O ${USER_NAME} ${DB_NAME}"
fi
echo "postgresql+psycopg://${USER_NAME}:${PASSWORD}@127.0.0.1:5432/${DB_NAME}" >"$URL_FILE"
echo "portal-setup: PostgreSQL ${version} on 127.0.0.1:5432 (URL in ${URL_FILE}); chromium at $(command -v chromium)"
