#!/usr/bin/env bash
# Remote operations benchmark (docs/BENCHMARKS.md, "Remote operations"; issue 28). Not a test.
#
# Usage: bench/operations.sh
#
# Packages the app (offline) and runs dev.syncular.server.bench.OperationsBenchmark, which starts the packaged
# server itself (one pod, then a second on the same database; the chart's JVM flags) in a fresh storage schema
# with the watch fixture and the declared commands of src/test/resources/operations, and measures: (a) a scoped
# query of 100 rows, 20 clients (queries/s, p50/p99); (b) command rounds/s against push rounds/s; (c) 1,000
# watches over 100 lists on pod B while 100 commits/s flow through pod A: commit-to-snapshot p50/p99/max and
# database statements per commit (pg_stat_statements, when installed in the database:
# CREATE EXTENSION IF NOT EXISTS pg_stat_statements, as a superuser).
#
# Environment:
#   SYNCULAR_TEST_PG_URL  PostgreSQL URL (default postgresql://127.0.0.1:5432/syncular_test)
#   SYNCULAR_TEST_PG_USER / SYNCULAR_TEST_PG_PASSWORD   (default syncular / syncular)
#   BENCH_OPTS            extra -D options, e.g. "-Dbench.seconds=10 -Dbench.watches=200", or
#                         "-Dbench.phases=c" to run only phase (c)
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
status=0
# shellcheck disable=SC2086
java -Xmx1g ${BENCH_OPTS:-} -cp "target/classes:target/test-classes:$(cat target/bench.cp)" \
    dev.syncular.server.bench.OperationsBenchmark || status=$?
if command -v psql >/dev/null; then
    for s in $(pg_psql -c "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench_ops_%'" 2>/dev/null); do
        pg_psql -c "DROP SCHEMA IF EXISTS \"$s\" CASCADE" >/dev/null 2>&1 || echo "note: could not drop $s" >&2
    done
fi
exit $status
