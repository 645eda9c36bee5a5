#!/usr/bin/env bash
# Realtime benchmark (docs/BENCHMARKS.md, "Realtime"). Not a test.
#
# Usage: bench/realtime.sh
#
# Packages the app (offline) and runs dev.syncular.server.bench.RealtimeBenchmark, which starts the packaged
# server itself (one pod, then a second on the same database; the chart's JVM flags) in a fresh storage schema
# and measures: (a) 10,000 idle authenticated sockets and the pod's RSS; (b) 1,000 sockets over 100 scopes
# while a writer commits 100 commits/s, push-to-delta latency; (c) the same with the writer on pod A and the
# sockets on pod B; (d) socket rounds/s against HTTP rounds/s.
#
# Environment:
#   SYNCULAR_TEST_PG_URL  PostgreSQL URL (default postgresql://127.0.0.1:5432/syncular_test)
#   SYNCULAR_TEST_PG_USER / SYNCULAR_TEST_PG_PASSWORD   (default syncular / syncular)
#   BENCH_OPTS            extra -D options, e.g. "-Dbench.idleSockets=2000 -Dbench.fanoutSec=10", or
#                         "-Dbench.phases=cd" to run only phases (c) and (d)
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
# shellcheck disable=SC2086
java -Xmx1g ${BENCH_OPTS:-} -cp "target/classes:target/test-classes:$(cat target/bench.cp)" \
    dev.syncular.server.bench.RealtimeBenchmark
status=$?
if command -v psql >/dev/null; then
    for s in $(pg_psql -c "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench_rt_%'" 2>/dev/null); do
        pg_psql -c "DROP SCHEMA IF EXISTS \"$s\" CASCADE" >/dev/null 2>&1 || echo "note: could not drop $s" >&2
    done
fi
exit $status
