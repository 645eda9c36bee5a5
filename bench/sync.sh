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

if [[ "${SKIP_PACKAGE:-}" != 1 ]]; then
    echo "== packaging (./mvnw -o -q package -DskipTests)" >&2
    ./mvnw -o -q package -DskipTests
fi
if ! ./mvnw -o -q dependency:build-classpath -Dmdep.outputFile=target/bench.cp; then
    echo "offline dependency:build-classpath failed; retrying online once" >&2
    ./mvnw -q dependency:build-classpath -Dmdep.outputFile=target/bench.cp
fi

# A free local port (bound then released by the kernel's ephemeral allocator).
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')

# psql against the same database (for dropping the schema and the version string); optional.
pg_psql() {
    local rest="${PG_URL#postgresql://}"
    rest="${rest#postgres://}"
    local hostport="${rest%%/*}" db="${rest#*/}"
    db="${db%%\?*}"
    PGPASSWORD="$PG_PASSWORD" psql -X -q -At -h "${hostport%%:*}" -p "${hostport##*:}" -U "$PG_USER" -d "$db" "$@"
}

SERVER_PID=""
cleanup() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 100); do
            kill -0 "$SERVER_PID" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "server did not stop on SIGTERM; killing it" >&2
            kill -9 "$SERVER_PID" 2>/dev/null || true
        fi
    fi
    if command -v psql >/dev/null; then
        pg_psql -c "DROP SCHEMA IF EXISTS \"$PG_SCHEMA\" CASCADE" >/dev/null 2>&1 \
            || echo "note: could not drop schema $PG_SCHEMA" >&2
    fi
}
trap cleanup EXIT INT TERM

echo "== server JVM options: $SERVER_JAVA_OPTS" >&2
echo "== starting the server on port $PORT (storage schema $PG_SCHEMA; log $LOG)" >&2
# shellcheck disable=SC2086
QUARKUS_HTTP_PORT="$PORT" \
QUARKUS_DATASOURCE_REACTIVE_URL="$PG_URL" \
SYNCULAR_PG_USER="$PG_USER" \
SYNCULAR_PG_PASSWORD="$PG_PASSWORD" \
SYNCULAR_DEV_AUTH_ENABLED=true \
SYNCULAR_SCHEMA_PATH="$SCHEMA_FILE" \
SYNCULAR_STORAGE_PG_SCHEMA="$PG_SCHEMA" \
    java $SERVER_JAVA_OPTS -jar target/quarkus-app/quarkus-run.jar >"$LOG" 2>&1 &
SERVER_PID=$!

deadline=$((SECONDS + 90))
until curl -sf "http://127.0.0.1:$PORT/q/health/ready" >/dev/null 2>&1; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
        echo "server exited during start-up; last log lines:" >&2
        tail -n 30 "$LOG" >&2
        exit 1
    fi
    if ((SECONDS >= deadline)); then
        echo "server not ready within 90 s; last log lines:" >&2
        tail -n 30 "$LOG" >&2
        exit 1
    fi
    sleep 0.2
done
echo "== server ready (pid $SERVER_PID)" >&2

# The local postmaster's pid, for per-phase PostgreSQL CPU accounting (optional).
PG_PID=0
if [[ "$PG_URL" == *"127.0.0.1:"* || "$PG_URL" == *"localhost:"* ]]; then
    pg_port="${PG_URL##*:}"
    pg_port="${pg_port%%/*}"
    PG_PID=$(ss -ltnpH "sport = :$pg_port" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2 || true)
    PG_PID=${PG_PID:-0}
fi

echo "== machine: nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //');" \
    "load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u)" >&2
if command -v psql >/dev/null; then
    echo "== $(pg_psql -c 'SHOW server_version' 2>/dev/null || echo 'PostgreSQL version unknown')" >&2
fi

status=0
# shellcheck disable=SC2086
java -Xmx1g -Dbench.pgPid="$PG_PID" ${BENCH_OPTS:-} \
    -cp "target/classes:target/test-classes:$(cat target/bench.cp)" \
    dev.syncular.server.bench.SyncBenchmark "http://127.0.0.1:$PORT" "$SERVER_PID" "$SCHEMA_FILE" || status=$?
exit $status
