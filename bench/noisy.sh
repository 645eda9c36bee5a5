#!/usr/bin/env bash
# The noisy neighbour (docs/BENCHMARKS.md, "Noisy neighbour"). Not a test.
#
# Usage: bench/noisy.sh
#
# Packages the app (offline), then runs dev.syncular.server.bench.NoisyBenchmark, which starts two packaged pods
# itself (the chart's JVM flags, the product's default fairness settings) in a fresh storage schema: 999 quiet
# partitions make 100 rounds/s together while one hostile tenant runs each attack in turn at full speed (push flood,
# huge rows, subscription multiplication, bootstrap storm, presence flood, watch storm), and prints the quiet rounds'
# p50/p99 against the baseline without the hostile tenant, and the hostile tenant's answered and refused rounds. The
# pods register one query for the watch storm (SYNCULAR_OPERATIONS_QUERIES_PATH, a file NoisyWatchStorm writes).
#
# Environment:
#   SYNCULAR_TEST_PG_URL  PostgreSQL URL (default postgresql://127.0.0.1:5432/syncular_test)
#   SYNCULAR_TEST_PG_USER / SYNCULAR_TEST_PG_PASSWORD   (default syncular / syncular)
#   BENCH_OPTS            extra -D options, e.g. "-Dbench.quiet=999 -Dbench.quietRate=100 -Dbench.attackSec=20
#                         -Dbench.attacks=baseline,push-flood"
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
java -Xmx1g ${BENCH_OPTS:-} \
    -cp "target/classes:target/test-classes:$(cat target/bench.cp)" \
    dev.syncular.server.bench.NoisyBenchmark || status=$?
if command -v psql >/dev/null; then
    for s in $(pg_psql -c "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'bench_noisy_%'" 2>/dev/null); do
        pg_psql -c "DROP SCHEMA IF EXISTS \"$s\" CASCADE" >/dev/null 2>&1 || true
    done
fi
exit $status
