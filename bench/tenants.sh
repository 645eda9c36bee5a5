#!/usr/bin/env bash
# Many tenants on one PostgreSQL (docs/BENCHMARKS.md, "Many partitions"). Not a test.
#
# Usage: bench/tenants.sh
#
# Packages the app (offline), runs pgbench -N on the same database as the physical reference of this machine,
# then dev.syncular.server.bench.TenantsBenchmark, which starts two packaged pods itself (the chart's JVM flags)
# in a fresh storage schema and, for 1, 10, 100 and 1,000 partitions, measures (a) push-pull rounds/s, p50/p99 and
# PostgreSQL CPU, transactions and statements per round, (b) commit-to-delta latency with the writer on pod A and
# one socket per partition on pod B.
#
# Statements per round need pg_stat_statements (shared_preload_libraries = 'pg_stat_statements' and
# CREATE EXTENSION pg_stat_statements in the database, as a superuser); without it they print as n/a.
#
# Environment:
#   SYNCULAR_TEST_PG_URL  PostgreSQL URL (default postgresql://127.0.0.1:5432/syncular_test)
#   SYNCULAR_TEST_PG_USER / SYNCULAR_TEST_PG_PASSWORD   (default syncular / syncular)
#   BENCH_OPTS            extra -D options, e.g. "-Dbench.partitions=1,100 -Dbench.measureSec=10 -Dbench.phases=a"
#   PGBENCH_SEC           seconds of pgbench -N (default 20; 0 skips it)
#   SKIP_PACKAGE=1        reuse target/quarkus-app and target/test-classes as they are
set -euo pipefail
cd "$(dirname "$0")/.."

export SYNCULAR_TEST_PG_URL="${SYNCULAR_TEST_PG_URL:-postgresql://127.0.0.1:5432/syncular_test}"
export SYNCULAR_TEST_PG_USER="${SYNCULAR_TEST_PG_USER:-syncular}"
export SYNCULAR_TEST_PG_PASSWORD="${SYNCULAR_TEST_PG_PASSWORD:-syncular}"
PG_URL="$SYNCULAR_TEST_PG_URL" PG_USER="$SYNCULAR_TEST_PG_USER" PG_PASSWORD="$SYNCULAR_TEST_PG_PASSWORD"

# shellcheck source=bench/lib.sh
source bench/lib.sh
package_and_classpath

machine_line >&2
PGBENCH_SEC="${PGBENCH_SEC:-20}"
PGBENCH="$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -n 1 || true)"
if [[ "$PGBENCH_SEC" != 0 && -n "$PGBENCH" ]]; then
    rest="${PG_URL#postgresql://}"
    hostport="${rest%%/*}" db="${rest#*/}"
    db="${db%%\?*}"
    pgb() { PGPASSWORD="$PG_PASSWORD" "$PGBENCH" -h "${hostport%%:*}" -p "${hostport##*:}" -U "$PG_USER" "$@" "$db"; }
    echo "== pgbench -N (scale 10, 20 clients, 2 threads, ${PGBENCH_SEC} s), the database's reference" >&2
    pgb -i -q -s 10 >/dev/null 2>&1
    wal0="$(pg_psql -c "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint")"
    out="$(pgb -N -n -c 20 -j 2 -T "$PGBENCH_SEC" 2>/dev/null || true)"
    wal1="$(pg_psql -c "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint")"
    grep -E "^(tps|latency average)" <<<"$out" || true
    tx="$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")"
    if [[ -n "$tx" && "$tx" -gt 0 ]]; then
        echo "WAL bytes per pgbench -N transaction: $(( (wal1 - wal0) / tx ))"
    fi
    pg_psql -c "DROP TABLE IF EXISTS pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers" >/dev/null
fi

status=0
# shellcheck disable=SC2086
java -Xmx1g -Dbench.pgPid="$(postmaster_pid)" ${BENCH_OPTS:-} \
    -cp "target/classes:target/test-classes:$(cat target/bench.cp)" \
    dev.syncular.server.bench.TenantsBenchmark || status=$?
if command -v psql >/dev/null; then
    for s in $(pg_psql -c "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench_tn_%'" 2>/dev/null); do
        pg_psql -c "DROP SCHEMA IF EXISTS \"$s\" CASCADE" >/dev/null 2>&1 || echo "note: could not drop $s" >&2
    done
fi
exit $status
