#!/usr/bin/env bash
# End-to-end sync benchmark over HTTP on PostgreSQL (docs/BENCHMARKS.md, "Sync over HTTP"). Not a test.
#
# Usage: bench/sync.sh
#
# Packages the app (offline), starts the packaged server (prod profile, dev header auth) on a free port
# against PostgreSQL in a fresh storage schema, waits for /q/health/ready, runs
# dev.syncular.server.bench.SyncBenchmark (push-pull rounds with 20 clients, rows-lane bootstrap of 20k and
# 100k rows, server RSS), then stops the server and drops the schema.
#
# Environment:
#   SYNCULAR_PG_URL       PostgreSQL URL (default postgresql://127.0.0.1:5432/syncular_test)
#   SYNCULAR_PG_USER / SYNCULAR_PG_PASSWORD   (default syncular / syncular)
#   SERVER_JAVA_OPTS      JVM options for the server (default: $DEFAULT_SERVER_JAVA_OPTS below, the recommended
#                         production flags; set SERVER_JAVA_OPTS=" " for the JVM's own defaults)
#   BENCH_OPTS            extra JVM -D options for the benchmark, e.g. "-Dbench.measureSec=30
#                         -Dbench.warmupSec=45 -Dbench.clients=20 -Dbench.bootstrapRuns=5
#                         -Dbench.bootstrapWarmups=3 -Dbench.bootstrapSizes=20000,100000"
#   SKIP_PACKAGE=1        reuse target/quarkus-app and target/test-classes as they are
set -euo pipefail
cd "$(dirname "$0")/.."

PG_URL="${SYNCULAR_PG_URL:-postgresql://127.0.0.1:5432/syncular_test}"
PG_USER="${SYNCULAR_PG_USER:-syncular}"
PG_PASSWORD="${SYNCULAR_PG_PASSWORD:-syncular}"
SCHEMA_FILE="$PWD/src/test/resources/schema/notes.json"
PG_SCHEMA="bench_sync_$(date +%s)_$$"
LOG="target/bench-sync-server.log"
# Recommended production flags (docs/BENCHMARKS.md, "Sync over HTTP"): a capped heap with the serial
# collector (2 cores, small heap: least native overhead), committed up front and half of it young generation
# (bootstrap pages are short-lived: they die young instead of being promoted into full collections), capped
# metaspace / code cache / direct memory and smaller thread stacks, so the process stays under 400 MB RSS.
DEFAULT_SERVER_JAVA_OPTS="-XX:+UseSerialGC -Xms192m -Xmx192m -XX:NewRatio=1 -XX:MaxMetaspaceSize=128m -XX:ReservedCodeCacheSize=64m -XX:MaxDirectMemorySize=64m -Xss512k -XX:+ExitOnOutOfMemoryError"
SERVER_JAVA_OPTS="${SERVER_JAVA_OPTS:-$DEFAULT_SERVER_JAVA_OPTS}"

# shellcheck source=bench/lib.sh
source bench/lib.sh
package_and_classpath

serve_for_benchmark "$LOG"

PG_PID=$(postmaster_pid)
machine_line >&2
if command -v psql >/dev/null; then
    echo "== $(pg_psql -c 'SHOW server_version' 2>/dev/null || echo 'PostgreSQL version unknown')" >&2
fi

status=0
# shellcheck disable=SC2086
java -Xmx1g -Dbench.pgPid="$PG_PID" ${BENCH_OPTS:-} \
    -cp "target/classes:target/test-classes:$(cat target/bench.cp)" \
    dev.syncular.server.bench.SyncBenchmark "http://127.0.0.1:$PORT" "$SERVER_PID" "$SCHEMA_FILE" || status=$?
exit $status
