#!/usr/bin/env bash
# The realtime reconnect storm (docs/BENCHMARKS.md, "Reconnect storm"). Not a test.
#
# Usage: bench/reconnect.sh
#        SERVER_ENV="QUARKUS_WEBSOCKETS_NEXT_SERVER_PER_MESSAGE_COMPRESSION_SUPPORTED=true" bench/reconnect.sh
#            (the server accepting permessage-deflate, as before it declined it)
#        ACCEPT_ENCODING= BENCH_OPTS="-Dbench.offerDeflate=false" bench/reconnect.sh   (a client offering no
#            compression at all)
#
# Packages the app (offline), starts the packaged server (prod profile, dev header auth, the chart's JVM flags, a
# fresh storage schema), then runs dev.syncular.server.bench.ReconnectBenchmark: (a) 5 realtime clients drop and
# reconnect for 20 s while a writer pushes every 10 ms (upgrade, hello, one §8.7 catch-up round per reconnect),
# (b) 1,000 idle sockets and the server's RSS per socket. Sockets offer permessage-deflate as browsers do; the
# writer sends Accept-Encoding: gzip, deflate, br, zstd.
#
# Environment:
#   SYNCULAR_PG_URL       PostgreSQL URL (default postgresql://127.0.0.1:5432/syncular_test)
#   SYNCULAR_PG_USER / SYNCULAR_PG_PASSWORD   (default syncular / syncular)
#   SERVER_JAVA_OPTS      JVM options (default: the chart's flags with a 192m heap)
#   SERVER_ENV            extra environment of the server, e.g. "NAME=value NAME2=value2"
#   BENCH_OPTS            extra -D options: bench.vus (5), bench.seconds (20), bench.dataset (500),
#                         bench.idleSockets (1000), bench.offerDeflate (true), bench.acceptEncoding
#   ACCEPT_ENCODING       the writer's Accept-Encoding (default "gzip, deflate, br, zstd"; empty: none)
#   SKIP_PACKAGE=1        reuse target/quarkus-app and target/test-classes as they are
set -euo pipefail
cd "$(dirname "$0")/.."

PG_URL="${SYNCULAR_PG_URL:-postgresql://127.0.0.1:5432/syncular_test}"
PG_USER="${SYNCULAR_PG_USER:-syncular}"
PG_PASSWORD="${SYNCULAR_PG_PASSWORD:-syncular}"
SCHEMA_FILE="$PWD/src/main/resources/schema/quickstart.syncular.ir.json"
SERVER_JAVA_OPTS="${SERVER_JAVA_OPTS:--XX:+UseSerialGC -Xms192m -Xmx192m -XX:NewRatio=1 -XX:MaxMetaspaceSize=128m -XX:ReservedCodeCacheSize=64m -XX:MaxDirectMemorySize=64m -Xss512k -XX:+ExitOnOutOfMemoryError}"
PG_SCHEMA="bench_rc_$(date +%s)_$$"

# shellcheck source=bench/lib.sh
source bench/lib.sh
package_and_classpath
machine_line >&2
if [[ -n "${SERVER_ENV:-}" ]]; then
    # shellcheck disable=SC2086
    export ${SERVER_ENV}
    echo "== server environment: $SERVER_ENV" >&2
fi
serve_for_benchmark target/bench-reconnect-server.log
# shellcheck disable=SC2086
java -Dbench.acceptEncoding="${ACCEPT_ENCODING-gzip, deflate, br, zstd}" ${BENCH_OPTS:-} \
    -cp "target/test-classes:target/classes:$(cat target/bench.cp)" dev.syncular.server.bench.ReconnectBenchmark \
    "http://127.0.0.1:$PORT" "$SCHEMA_FILE" "$SERVER_PID"
echo "== server peak RSS (VmHWM): $(awk '/VmHWM/ {printf "%d MB", $2 / 1024}' "/proc/$SERVER_PID/status")"
