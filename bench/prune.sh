#!/usr/bin/env bash
# A first prune of a one-million-commit log under push load (docs/BENCHMARKS.md, "Several pods and long
# uptime"). Not a test; the suite's proof is PruneUnderLoadIT (100,000 commits).
#
# Usage: bench/prune.sh
#        BENCH_OPTS="-Dbench.partitions=10000 -Dbench.commitsPerPartition=120" \
#          SERVER_ENV="SYNCULAR_PRUNING_KEEP_NEWEST_COMMITS=20" bench/prune.sh     (many partitions)
#        The many-partitions case also reports commits pruned per second and the log tables' sizes (with their
#        indexes) after the generation, right after the prune and after a plain VACUUM.
#        BENCH_OPTS="-Dbench.partitions=10000 -Dbench.commitsPerPartition=100 -Dbench.repartition=16" \
#          SERVER_ENV="SYNCULAR_PRUNING_ENABLED=false SYNCULAR_STORAGE_LOG_PARTITIONS=0" bench/prune.sh
#        (the online move of a plain log to hash partitions instead of the prune: its rows a second and the
#        push rounds during it; docs/SCALING.md, "Partitioning the commit log")
#
# Packages the app (offline), starts the packaged server (prod profile, dev header auth, pruning every 2 s) on a
# free port against PostgreSQL in a fresh storage schema, waits for /q/health/ready, runs
# dev.syncular.server.bench.PruneBenchmark (push rounds to one partition; a million commits appended with SQL;
# the server's next pruning pass; push latency before and during the prune), then stops the server and drops
# the schema.
#
# Environment:
#   SYNCULAR_PG_URL       PostgreSQL URL (default postgresql://127.0.0.1:5432/syncular_test)
#   SYNCULAR_PG_USER / SYNCULAR_PG_PASSWORD   (default syncular / syncular)
#   SERVER_JAVA_OPTS      JVM options for the server (default: the recommended production flags of bench/sync.sh)
#   BENCH_OPTS            extra -D options, e.g. "-Dbench.commits=1000000 -Dbench.writers=2 -Dbench.baselineSec=20"
#   SERVER_ENV            extra server settings, e.g. "SYNCULAR_PRUNING_BATCH_COMMITS=5000"
#   APP_JAR               the server to run (default target/quarkus-app/quarkus-run.jar; e.g. an older build's)
#   SKIP_PACKAGE=1        reuse target/quarkus-app and target/test-classes as they are
set -euo pipefail
cd "$(dirname "$0")/.."

PG_URL="${SYNCULAR_PG_URL:-postgresql://127.0.0.1:5432/syncular_test}"
PG_USER="${SYNCULAR_PG_USER:-syncular}"
PG_PASSWORD="${SYNCULAR_PG_PASSWORD:-syncular}"
SCHEMA_FILE="$PWD/src/main/resources/schema/quickstart.syncular.ir.json"
PG_SCHEMA="bench_prune_$(date +%s)_$$"
LOG="target/bench-prune-server.log"
DEFAULT_SERVER_JAVA_OPTS="-XX:+UseSerialGC -Xms192m -Xmx192m -XX:NewRatio=1 -XX:MaxMetaspaceSize=128m -XX:ReservedCodeCacheSize=64m -XX:MaxDirectMemorySize=64m -Xss512k -XX:+ExitOnOutOfMemoryError"
SERVER_JAVA_OPTS="${SERVER_JAVA_OPTS:-$DEFAULT_SERVER_JAVA_OPTS}"

# shellcheck source=bench/lib.sh
source bench/lib.sh
package_and_classpath
# shellcheck disable=SC2086
export SYNCULAR_PRUNING_INTERVAL=2s ${SERVER_ENV:-}
echo "== server settings: SYNCULAR_PRUNING_INTERVAL=2s ${SERVER_ENV:-}" >&2
serve_for_benchmark "$LOG"
machine_line >&2
if command -v psql >/dev/null; then
    echo "== $(pg_psql -c 'SHOW server_version' 2>/dev/null || echo 'PostgreSQL version unknown')" >&2
fi

status=0
# shellcheck disable=SC2086
java -Xmx512m ${BENCH_OPTS:-} -cp "target/classes:target/test-classes:$(cat target/bench.cp)" \
    dev.syncular.server.bench.PruneBenchmark "http://127.0.0.1:$PORT" "$PG_URL" "$PG_USER" "$PG_PASSWORD" \
    "$PG_SCHEMA" "$SCHEMA_FILE" || status=$?
grep -E "pruning removed [0-9]{5,}" "$LOG" >&2 || true
exit $status
