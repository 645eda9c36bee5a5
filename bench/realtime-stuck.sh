#!/usr/bin/env bash
# Stuck-socket benchmark (docs/REALTIME.md, "Backpressure"). Not a test; takes minutes at full size.
#
# Usage: bench/realtime-stuck.sh
#
# Packages the app (offline) and runs dev.syncular.server.bench.RealtimeStuckBenchmark: one packaged pod with
# the chart's JVM flags, 10,000 registered sockets of which 1,000 never read, a writer committing 100
# commits/s of one 200 KB row for 20 s; liveness asked every 100 ms, RSS sampled. It prints pushes applied and
# failed, how many reading sockets got every delta, wake-ups, the outbound-budget counters (refusals, 4290
# closes), liveness answers and the slowest, and the peak RSS against the chart's 512 Mi.
#
# Environment:
#   SYNCULAR_TEST_PG_URL  PostgreSQL URL (default postgresql://127.0.0.1:5432/syncular_test)
#   SYNCULAR_TEST_PG_USER / SYNCULAR_TEST_PG_PASSWORD   (default syncular / syncular)
#   BENCH_OPTS            extra -D options, e.g. "-Dbench.sockets=500 -Dbench.stuck=50 -Dbench.sec=5"
#                         (also bench.scopes, bench.commitsPerSec, bench.rowBytes)
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
java -Xmx2g ${BENCH_OPTS:-} -cp "target/classes:target/test-classes:$(cat target/bench.cp)" \
    dev.syncular.server.bench.RealtimeStuckBenchmark || status=$?
if command -v psql >/dev/null; then
    for s in $(pg_psql -c "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench_rt_%'" 2>/dev/null); do
        pg_psql -c "DROP SCHEMA IF EXISTS \"$s\" CASCADE" >/dev/null 2>&1 || echo "note: could not drop $s" >&2
    done
fi
exit $status
