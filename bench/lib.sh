# Shell helpers shared by the benchmark scripts (sourced, not run). Expects PG_URL, PG_USER and PG_PASSWORD.

# ./mvnw offline (the cache a benchmark machine keeps warm, no network between runs); when that fails — a fresh
# clone's empty Maven repository, a plugin only the bench profile uses — once more online.
mvnw_offline_first() {
    if ! ./mvnw -o "$@"; then
        echo "== offline ./mvnw $* failed (a fresh Maven repository?): once more online" >&2
        ./mvnw "$@"
    fi
}

# Packages the app unless SKIP_PACKAGE=1, then writes the dependency classpath to target/bench.cp.
# The benchmarks live in src/bench/java and compile into target/test-classes only with -Pbench (pom.xml): with
# SKIP_PACKAGE=1 they are compiled when a build without the profile has left them out.
package_and_classpath() {
    if [[ "${SKIP_PACKAGE:-}" != 1 ]]; then
        echo "== packaging (./mvnw -q -Pbench package -DskipTests)" >&2
        mvnw_offline_first -q -Pbench package -DskipTests
    elif [[ ! -f target/test-classes/dev/syncular/server/bench/SyncBenchmark.class ]]; then
        mvnw_offline_first -q -Pbench test-compile
    fi
    bench_classpath
}

# The dependency classpath in target/bench.cp.
bench_classpath() {
    mvnw_offline_first -q dependency:build-classpath -Dmdep.outputFile=target/bench.cp
}

# A free local port (bound then released by the kernel's ephemeral allocator).
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# psql against the benchmark database (dropping the schema, the version string); optional.
pg_psql() {
    local rest="${PG_URL#postgresql://}"
    rest="${rest#postgres://}"
    local hostport="${rest%%/*}" db="${rest#*/}"
    db="${db%%\?*}"
    PGPASSWORD="$PG_PASSWORD" psql -X -q -At -h "${hostport%%:*}" -p "${hostport##*:}" -U "$PG_USER" -d "$db" "$@"
}

# Stops a background process: SIGTERM, then SIGKILL after 10 s.
stop_pid() { # pid name
    local pid="$1"
    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 100); do
            kill -0 "$pid" 2>/dev/null || return 0
            sleep 0.1
        done
        echo "$2 did not stop on SIGTERM; killing it" >&2
        kill -9 "$pid" 2>/dev/null || true
    fi
}

# Polls url until it answers (any status; with "ok", a 2xx), within 90 s; fails with the log's tail when
# the process exits or the deadline passes.
wait_for() { # url pid name log [ok]
    local deadline=$((SECONDS + 90)) flags=(-s -o /dev/null)
    [[ "${5:-}" == ok ]] && flags=(-sf -o /dev/null)
    until curl "${flags[@]}" "$1" 2>/dev/null; do
        if ! kill -0 "$2" 2>/dev/null; then
            echo "$3 exited during start-up; last log lines:" >&2
            tail -n 30 "$4" >&2
            exit 1
        fi
        if ((SECONDS >= deadline)); then
            echo "$3 not ready within 90 s; last log lines:" >&2
            tail -n 30 "$4" >&2
            exit 1
        fi
        sleep 0.2
    done
}

# The local postmaster's pid (its backends are its children) for per-phase PostgreSQL CPU; 0 when remote.
postmaster_pid() {
    local pid=0
    if [[ "$PG_URL" == *"127.0.0.1:"* || "$PG_URL" == *"localhost:"* ]]; then
        local pg_port="${PG_URL##*:}"
        pg_port="${pg_port%%/*}"
        pid=$(ss -ltnpH "sport = :$pg_port" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2 || true)
    fi
    echo "${pid:-0}"
}

machine_line() {
    echo "== machine: nproc $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //');" \
        "load average $(cut -d' ' -f1-3 /proc/loadavg); $(date -u)"
}

# Starts the packaged server in the background (prod profile, dev header auth, a fresh storage schema) on
# $PORT (metrics on $MANAGEMENT_PORT, a free port unless set) against $PG_URL with $SERVER_JAVA_OPTS plus the given JVM arguments; sets SERVER_PID.
# The push rates (syncular.fairness.push-*) are off unless set: the benchmarks measure what one pod and its
# database can carry; set them in the environment to measure with them.
start_server() { # log [jvm args...]
    local log="$1"
    shift
    MANAGEMENT_PORT="${MANAGEMENT_PORT:-$(free_port)}"
    # shellcheck disable=SC2086
    QUARKUS_HTTP_PORT="$PORT" \
    QUARKUS_MANAGEMENT_PORT="$MANAGEMENT_PORT" \
    QUARKUS_DATASOURCE_REACTIVE_URL="$PG_URL" \
    SYNCULAR_PG_USER="$PG_USER" \
    SYNCULAR_PG_PASSWORD="$PG_PASSWORD" \
    SYNCULAR_DEV_AUTH_ENABLED=true \
    SYNCULAR_SCHEMA_PATH="$SCHEMA_FILE" \
    SYNCULAR_STORAGE_PG_SCHEMA="$PG_SCHEMA" \
    SYNCULAR_SIGNED_URLS_KEY="${SYNCULAR_SIGNED_URLS_KEY:-bench-signing-key-0123456789abcdef0123}" \
    SYNCULAR_FAIRNESS_PUSH_OPERATIONS_PER_SECOND_PER_PARTITION="${SYNCULAR_FAIRNESS_PUSH_OPERATIONS_PER_SECOND_PER_PARTITION:-0}" \
    SYNCULAR_FAIRNESS_PUSH_BYTES_PER_SECOND_PER_PARTITION="${SYNCULAR_FAIRNESS_PUSH_BYTES_PER_SECOND_PER_PARTITION:-0}" \
    SYNCULAR_FAIRNESS_PUSH_OPERATIONS_PER_SECOND_PER_ACTOR="${SYNCULAR_FAIRNESS_PUSH_OPERATIONS_PER_SECOND_PER_ACTOR:-0}" \
    SYNCULAR_FAIRNESS_PUSH_BYTES_PER_SECOND_PER_ACTOR="${SYNCULAR_FAIRNESS_PUSH_BYTES_PER_SECOND_PER_ACTOR:-0}" \
        "${JAVA:-java}" $SERVER_JAVA_OPTS "$@" -jar "${APP_JAR:-target/quarkus-app/quarkus-run.jar}" >"$log" 2>&1 &
    SERVER_PID=$!
}

# Starts the packaged server for a benchmark (start_server) on a free port and waits until it is ready; on exit
# stops it and drops $PG_SCHEMA. Sets PORT and SERVER_PID.
serve_for_benchmark() { # log
    PORT=$(free_port)
    SERVER_PID=""
    trap 'stop_pid "$SERVER_PID" server; drop_schema' EXIT INT TERM
    echo "== server JVM options: $SERVER_JAVA_OPTS" >&2
    echo "== starting the server on port $PORT (storage schema $PG_SCHEMA; log $1)" >&2
    start_server "$1"
    wait_for "http://127.0.0.1:$PORT/q/health/ready" "$SERVER_PID" server "$1" ok
    echo "== server ready (pid $SERVER_PID)" >&2
}

# Drops $PG_SCHEMA (needs psql; a note otherwise).
drop_schema() {
    if command -v psql >/dev/null; then
        pg_psql -c "DROP SCHEMA IF EXISTS \"$PG_SCHEMA\" CASCADE" >/dev/null 2>&1 \
            || echo "note: could not drop schema $PG_SCHEMA" >&2
    fi
}
