#!/usr/bin/env bash
# Start-up time of the packaged server (docs/BENCHMARKS.md, "Start-up"). Not a test.
#
# Usage: bench/startup.sh
#
# Packages the app, then starts the packaged server RUNS times (default 5; prod profile, dev header auth,
# the chart's JVM flags, a fresh storage schema each time) and reports, per run and as medians: the milliseconds
# from the process start until /q/health/ready answers 200, and the time Quarkus reports in its "started in" line.
#
# Environment:
#   SYNCULAR_PG_URL       PostgreSQL URL (default postgresql://127.0.0.1:5432/syncular_test)
#   SYNCULAR_PG_USER / SYNCULAR_PG_PASSWORD   (default syncular / syncular)
#   RUNS                  how many starts (default 5)
#   SERVER_JAVA_OPTS      JVM options (default: the chart's flags)
#   APP_JAR               the jar to start (default target/quarkus-app/quarkus-run.jar)
#   JAVA                  the java launcher (default java on the PATH), e.g. /usr/lib/jvm/temurin-25-jdk-amd64/bin/java
#   SKIP_PACKAGE=1        reuse target/quarkus-app as it is
set -euo pipefail
cd "$(dirname "$0")/.."

PG_URL="${SYNCULAR_PG_URL:-postgresql://127.0.0.1:5432/syncular_test}"
PG_USER="${SYNCULAR_PG_USER:-syncular}"
PG_PASSWORD="${SYNCULAR_PG_PASSWORD:-syncular}"
SCHEMA_FILE="$PWD/src/test/resources/schema/notes.json"
RUNS="${RUNS:-5}"
SERVER_JAVA_OPTS="${SERVER_JAVA_OPTS:--XX:+UseSerialGC -Xms192m -Xmx192m -XX:NewRatio=1 -XX:MaxMetaspaceSize=128m -XX:ReservedCodeCacheSize=64m -XX:MaxDirectMemorySize=64m -Xss512k -XX:+ExitOnOutOfMemoryError}"
LOG="target/bench-startup-server.log"

# shellcheck source=bench/lib.sh
source bench/lib.sh
if [[ "${SKIP_PACKAGE:-}" != 1 ]]; then
    echo "== packaging (./mvnw -q package -DskipTests)" >&2
    mvnw_offline_first -q package -DskipTests
fi
machine_line >&2
echo "== server JVM options: $SERVER_JAVA_OPTS; jar ${APP_JAR:-target/quarkus-app/quarkus-run.jar}" >&2

SERVER_PID=""
PG_SCHEMA=""
trap 'stop_pid "$SERVER_PID" server; if [[ -n "$PG_SCHEMA" ]]; then drop_schema; fi' EXIT INT TERM
ready=()
started=()
for i in $(seq 1 "$RUNS"); do
    PG_SCHEMA="bench_start_$(date +%s)_$$_$i"
    PORT=$(free_port)
    MANAGEMENT_PORT=$(free_port)
    t0=$(date +%s%N)
    start_server "$LOG"
    wait_for "http://127.0.0.1:$PORT/q/health/ready" "$SERVER_PID" server "$LOG" ok
    t1=$(date +%s%N)
    ms=$(((t1 - t0) / 1000000))
    quarkus=$(grep -o 'started in [0-9.]*s' "$LOG" | head -n1 | grep -o '[0-9.]*' || echo "?")
    echo "run $i: ready after ${ms} ms (Quarkus: started in ${quarkus} s)"
    ready+=("$ms")
    started+=("$quarkus")
    stop_pid "$SERVER_PID" server
    SERVER_PID=""
    drop_schema
    PG_SCHEMA=""
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "== median of $RUNS: ready after $(median "${ready[@]}") ms; Quarkus started in $(median "${started[@]}") s"
