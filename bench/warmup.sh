#!/usr/bin/env bash
# Warm-up of the packaged server (docs/BENCHMARKS.md, "Warm-up"). Not a test.
#
# Usage: bench/warmup.sh
#        JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java CACHE=aot bench/warmup.sh    (Java 25, AOT cache)
#        CACHE=appcds bench/warmup.sh                                                 (Java 17, AppCDS)
#
# Packages the app (offline), starts the packaged server (prod profile, dev header auth, the chart's JVM flags, a
# fresh storage schema), measures the process start to /q/health/ready, then runs
# dev.syncular.server.bench.WarmupBenchmark at once: 20 writers pushing for 90 s, rounds/s of every second, the
# steady state and the time until throughput reaches 90 % of it; and the server's peak RSS (VmHWM).
#
# CACHE=aot (Java 25, JEP 483/515) or CACHE=appcds (Java 17+) first runs a training server under the same load for
# TRAIN_SEC (default 30) with -XX:AOTCacheOutput / -XX:ArchiveClassesAtExit, stops it (the cache is written at
# exit), then measures a server started with -XX:AOTCache / -XX:SharedArchiveFile.
#
# Environment:
#   SYNCULAR_PG_URL       PostgreSQL URL (default postgresql://127.0.0.1:5432/syncular_test)
#   SYNCULAR_PG_USER / SYNCULAR_PG_PASSWORD   (default syncular / syncular)
#   JAVA                  the java launcher (default java on the PATH)
#   CACHE                 none (default), aot or appcds
#   SERVER_JAVA_OPTS      JVM options (default: the chart's flags)
#   BENCH_OPTS            extra -D options, e.g. "-Dbench.clients=20 -Dbench.seconds=90"
#   SKIP_PACKAGE=1        reuse target/quarkus-app and target/test-classes as they are
# The 20 writers are one actor: run with SYNCULAR_FAIRNESS_MAX_ROUNDS_PER_ACTOR=0 and
# SYNCULAR_FAIRNESS_MAX_ROUNDS_PER_PARTITION=0 in the environment (the server inherits it), or most rounds are
# refused 429 by the per-actor round limit (8) and the figures measure the refusals.
set -euo pipefail
cd "$(dirname "$0")/.."

PG_URL="${SYNCULAR_PG_URL:-postgresql://127.0.0.1:5432/syncular_test}"
PG_USER="${SYNCULAR_PG_USER:-syncular}"
PG_PASSWORD="${SYNCULAR_PG_PASSWORD:-syncular}"
SCHEMA_FILE="$PWD/src/main/resources/schema/quickstart.syncular.ir.json"
SERVER_JAVA_OPTS="${SERVER_JAVA_OPTS:--XX:+UseSerialGC -Xms192m -Xmx192m -XX:NewRatio=1 -XX:MaxMetaspaceSize=128m -XX:ReservedCodeCacheSize=64m -XX:MaxDirectMemorySize=64m -Xss512k -XX:+ExitOnOutOfMemoryError}"
CACHE="${CACHE:-none}"
TRAIN_SEC="${TRAIN_SEC:-30}"
LOG="target/bench-warmup-server.log"

# shellcheck source=bench/lib.sh
source bench/lib.sh
package_and_classpath
machine_line >&2
echo "== java: $("${JAVA:-java}" -version 2>&1 | head -n1); cache: $CACHE; server JVM options: $SERVER_JAVA_OPTS" >&2

SERVER_PID=""
PG_SCHEMA=""
trap 'stop_pid "$SERVER_PID" server; if [[ -n "$PG_SCHEMA" ]]; then drop_schema; fi' EXIT INT TERM
CP="target/test-classes:target/classes:$(cat target/bench.cp)"

# One server under the warm-up load; $1: the log, then JVM arguments. Prints the benchmark's lines.
run_once() {
    local log="$1"
    shift
    PG_SCHEMA="bench_warm_$(date +%s)_$$_$RANDOM"
    PORT=$(free_port)
    MANAGEMENT_PORT=$(free_port)
    local t0 t1
    t0=$(date +%s%N)
    start_server "$log" "$@"
    wait_for "http://127.0.0.1:$PORT/q/health/ready" "$SERVER_PID" server "$log" ok
    t1=$(date +%s%N)
    # shellcheck disable=SC2086
    java ${BENCH_OPTS:-} -cp "$CP" dev.syncular.server.bench.WarmupBenchmark \
        "http://127.0.0.1:$PORT" "$SCHEMA_FILE" "$(((t1 - t0) / 1000000))"
    echo "== server peak RSS (VmHWM): $(awk '/VmHWM/ {printf "%d MB", $2 / 1024}' "/proc/$SERVER_PID/status")"
    stop_pid "$SERVER_PID" server
    SERVER_PID=""
    drop_schema
    PG_SCHEMA=""
}

case "$CACHE" in
    none) run_once "$LOG" ;;
    aot)
        rm -f target/warmup.aot
        echo "== training run (${TRAIN_SEC} s, -XX:AOTCacheOutput=target/warmup.aot)" >&2
        BENCH_OPTS="${BENCH_OPTS:-} -Dbench.seconds=$TRAIN_SEC" run_once "$LOG.train" -XX:AOTCacheOutput=target/warmup.aot >/dev/null
        ls -l target/warmup.aot >&2
        run_once "$LOG" -XX:AOTCache=target/warmup.aot
        ;;
    appcds)
        rm -f target/warmup.jsa
        echo "== training run (${TRAIN_SEC} s, -XX:ArchiveClassesAtExit=target/warmup.jsa)" >&2
        BENCH_OPTS="${BENCH_OPTS:-} -Dbench.seconds=$TRAIN_SEC" run_once "$LOG.train" -XX:ArchiveClassesAtExit=target/warmup.jsa >/dev/null
        ls -l target/warmup.jsa >&2
        run_once "$LOG" -XX:SharedArchiveFile=target/warmup.jsa
        ;;
    *) echo "CACHE must be none, aot or appcds" >&2; exit 2 ;;
esac
