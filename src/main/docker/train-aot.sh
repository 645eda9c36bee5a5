#!/usr/bin/env bash
# Trains the JDK AOT cache (JEP 483, 514, 515) that Dockerfile.jvm ships, by a representative run of the packaged
# server: start-up, then sync rounds from the command-line client (subscribe, push, bootstrap, pull, an optimistic
# edit), then a clean stop; the JVM writes the cache at exit. Dockerfile.jvm runs it in its training stage, on the
# very base image the server runs on (a cache belongs to one JDK build and one class path: a mismatched cache is
# ignored with a warning, never fatal).
#
# Usage: train-aot.sh <app dir (quarkus-app)> <syncular-cli.jar> <schema IR> <output .aot>
#
# Environment:
#   JAVA              the java launcher (default: java on the PATH; JDK 25 or newer)
#   TRAIN_JAVA_OPTS   the server's JVM flags during training (default: the chart's javaOpts); the cache records
#                     them, and a production run with another GC loses the cache's archived heap
#   TRAIN_PG_URL      a PostgreSQL to train against (postgresql://host:port/db); TRAIN_PG_USER, TRAIN_PG_PASSWORD.
#                     Unset: a throwaway cluster is made with the initdb of Debian's / Ubuntu's postgresql package
#                     in a temporary directory (as the postgres OS user when run as root) and removed afterwards.
#   TRAIN_ROUNDS      sync rounds of the training workload (default 24)
set -euo pipefail

APP_DIR="$1"
CLI_JAR="$2"
SCHEMA="$3"
OUT="$4"
JAVA="${JAVA:-java}"
TRAIN_JAVA_OPTS="${TRAIN_JAVA_OPTS:--XX:+UseSerialGC -XX:InitialRAMPercentage=37.5 -XX:MaxRAMPercentage=37.5 -XX:NewRatio=1 -XX:MaxMetaspaceSize=128m -XX:ReservedCodeCacheSize=64m -XX:MaxDirectMemorySize=64m -Xss512k -XX:+ExitOnOutOfMemoryError}"
ROUNDS="${TRAIN_ROUNDS:-24}"
WORK=$(mktemp -d)
chmod 755 "$WORK"
SERVER_PID=""
PG_DIR=""

as_postgres() {
    if [[ $(id -u) == 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

cleanup() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then kill -9 "$SERVER_PID" 2>/dev/null || true; fi
    if [[ -n "$PG_DIR" ]]; then
        as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR" -m immediate stop >/dev/null 2>&1 || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

free_port() { # a port nothing listens on, from bash alone (no python or curl in a JRE image)
    local p
    for p in $(seq 18080 18180); do
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return
        fi
    done
    echo "train-aot.sh: no free port in 18080-18180" >&2
    exit 1
}

http_status() { # port path: the HTTP status, or nothing
    local status=""
    { exec 3<>"/dev/tcp/127.0.0.1/$1" \
        && printf 'GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' "$2" >&3 \
        && read -r _ status _ <&3 \
        && exec 3>&-; } 2>/dev/null || true
    echo "$status"
}

if [[ -z "${TRAIN_PG_URL:-}" ]]; then
    PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [[ -z "$PG_BIN" || ! -x "$PG_BIN/initdb" ]]; then
        echo "train-aot.sh: no TRAIN_PG_URL and no PostgreSQL binaries under /usr/lib/postgresql" >&2
        exit 1
    fi
    PG_DIR="$WORK/pg"
    PG_PORT=$(free_port)
    mkdir -p "$PG_DIR"
    [[ $(id -u) == 0 ]] && chown postgres "$PG_DIR"
    as_postgres "$PG_BIN/initdb" -D "$PG_DIR" -U syncular --auth=trust -E UTF8 >/dev/null
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DIR" -w -l "$PG_DIR/log" \
        -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null
    "$PG_BIN/createdb" -h 127.0.0.1 -p "$PG_PORT" -U syncular syncular
    TRAIN_PG_URL="postgresql://127.0.0.1:$PG_PORT/syncular"
    TRAIN_PG_USER=syncular
    TRAIN_PG_PASSWORD=unused
fi

PORT=$(free_port)
MANAGEMENT_PORT=$((PORT + 1000))
mkdir -p "$(dirname "$OUT")"
rm -f "$OUT"
echo "== training the AOT cache: $("$JAVA" -version 2>&1 | head -n 1); $ROUNDS rounds; output $OUT" >&2
# shellcheck disable=SC2086
QUARKUS_HTTP_PORT="$PORT" \
QUARKUS_HTTP_HOST=127.0.0.1 \
QUARKUS_MANAGEMENT_PORT="$MANAGEMENT_PORT" \
QUARKUS_DATASOURCE_REACTIVE_URL="$TRAIN_PG_URL" \
SYNCULAR_PG_USER="${TRAIN_PG_USER:-syncular}" \
SYNCULAR_PG_PASSWORD="${TRAIN_PG_PASSWORD:-syncular}" \
SYNCULAR_DEV_AUTH_ENABLED=true \
SYNCULAR_SCHEMA_PATH="$SCHEMA" \
SYNCULAR_STORAGE_PG_SCHEMA="aot_training_$$" \
SYNCULAR_SIGNED_URLS_KEY=aot-training-signing-key-0123456789abcdef \
    "$JAVA" $TRAIN_JAVA_OPTS -XX:AOTCacheOutput="$OUT" -Djava.util.logging.manager=org.jboss.logmanager.LogManager \
    -jar "$APP_DIR/quarkus-run.jar" >"$WORK/server.log" 2>&1 &
SERVER_PID=$!

deadline=$((SECONDS + 120))
until [[ $(http_status "$PORT" /q/health/ready) == 200 || $(http_status "$MANAGEMENT_PORT" /q/health/ready) == 200 ]]; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null || ((SECONDS >= deadline)); then
        echo "train-aot.sh: the server did not become ready; its log:" >&2
        tail -n 40 "$WORK/server.log" >&2
        exit 1
    fi
    sleep 0.2
done

cli() { # actor command [args...]
    local actor="$1"
    shift
    "$JAVA" -jar "$CLI_JAR" --url "http://127.0.0.1:$PORT" --schema "$SCHEMA" --state "$WORK/$actor.json" \
        --actor "$actor" --partition training "$@" >/dev/null
}

cli writer subscribe todos todos list_id=training
cli reader subscribe todos todos list_id=training
for i in $(seq 1 "$ROUNDS"); do
    now=$(date +%s000)
    cli writer push todos "{\"id\":\"todo-$i\",\"list_id\":\"training\",\"title\":\"Item $i\",\"done\":false,\"position\":$i,\"updated_at_ms\":$now}"
    cli writer push todos "{\"id\":\"todo-$i\",\"title\":\"Item $i, edited\",\"done\":true,\"updated_at_ms\":$now}"
    if ((i % 8 == 1)); then cli reader bootstrap; else cli reader pull; fi
done

# SIGTERM: Quarkus stops cleanly, and the JVM assembles the cache at exit.
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || true
SERVER_PID=""
if [[ ! -s "$OUT" ]]; then
    echo "train-aot.sh: no AOT cache written; the server's log:" >&2
    tail -n 40 "$WORK/server.log" >&2
    exit 1
fi
echo "== AOT cache: $(du -h "$OUT" | cut -f1) in $OUT" >&2
