#!/usr/bin/env bash
# Bootstrap through S3-presigned segments: §5.3 SQLite image lane (cold build + serve, warm reuse) and the §5.2
# rows lane, both delivered by §5.4 presigned URLs from an S3-compatible store, with server heap/RSS sampled
# during the image build. Not a test.
#
# Usage: bench/segments.sh
#
# Starts s3proxy (transient in-memory provider, SigV4 signatures checked) on a free port and creates a bucket
# with a signed request; packages the app (offline) unless SKIP_PACKAGE=1; starts the packaged server (prod
# profile, dev header auth, recommended JVM flags, syncular.segments.store=s3) on a free port against PostgreSQL
# in a fresh storage schema; runs dev.syncular.server.bench.SegmentsBenchmark (seeds 100k and 1M rows, untimed,
# then measures); stops both processes and drops the schema on exit.
#
# Environment:
#   SYNCULAR_PG_URL       PostgreSQL URL (default postgresql://127.0.0.1:5432/syncular_test)
#   SYNCULAR_PG_USER / SYNCULAR_PG_PASSWORD   (default syncular / syncular)
#   SERVER_JAVA_OPTS      server JVM options (default: the flags the results in docs/BENCHMARKS.md were
#                         measured with; bench/sync.sh has the current recommendation)
#   S3PROXY_JAVA_OPTS     s3proxy JVM options (default -Xmx2g: the transient provider keeps objects on its heap)
#   SEED_BATCH            upserts per seed commit (default 500)
#   SEED_COMMITS          seed commits per push request (default 10); the server's
#                         syncular.limits.max-operations-per-request is raised to SEED_BATCH * SEED_COMMITS
#   BENCH_OPTS            extra JVM -D options for the benchmark, e.g. "-Dbench.sizes=100000,1000000
#                         -Dbench.pageRows=10000 -Dbench.maxPages=10 -Dbench.sampleMs=100"
#   SKIP_PACKAGE=1        reuse target/quarkus-app and target/test-classes as they are (test classes are still
#                         compiled when the benchmark class is missing)
set -euo pipefail
cd "$(dirname "$0")/.."

PG_URL="${SYNCULAR_PG_URL:-postgresql://127.0.0.1:5432/syncular_test}"
PG_USER="${SYNCULAR_PG_USER:-syncular}"
PG_PASSWORD="${SYNCULAR_PG_PASSWORD:-syncular}"
SCHEMA_FILE="$PWD/src/test/resources/schema/notes.json"
PG_SCHEMA="bench_seg_$(date +%s)_$$"
LOG="target/bench-segments-server.log"
S3_LOG="target/bench-segments-s3proxy.log"
DEFAULT_SERVER_JAVA_OPTS="-XX:+UseSerialGC -Xms64m -Xmx192m -XX:MaxMetaspaceSize=128m -XX:ReservedCodeCacheSize=64m -XX:MaxDirectMemorySize=64m -Xss512k -XX:+ExitOnOutOfMemoryError"
SERVER_JAVA_OPTS="${SERVER_JAVA_OPTS:-$DEFAULT_SERVER_JAVA_OPTS}"
S3PROXY_JAVA_OPTS="${S3PROXY_JAVA_OPTS:--Xmx2g}"
SEED_BATCH="${SEED_BATCH:-500}"
SEED_COMMITS="${SEED_COMMITS:-10}"
S3_ACCESS_KEY="bench-access"
S3_SECRET_KEY="bench-secret-key-$(date +%s%N)"
S3_REGION="us-east-1"
S3_BUCKET="syncular-bench-$$"
M2_REPO="${M2_REPO:-$HOME/.m2/repository}"
S3PROXY_JAR="$M2_REPO/org/gaul/s3proxy/2.9.0/s3proxy-2.9.0-jar-with-dependencies.jar"

# shellcheck source=bench/lib.sh
source bench/lib.sh
if [[ "${SKIP_PACKAGE:-}" != 1 ]]; then
    echo "== packaging (./mvnw -q -Pbench package -DskipTests)" >&2
    mvnw_offline_first -q -Pbench package -DskipTests
elif [[ ! -f target/test-classes/dev/syncular/server/bench/SegmentsBenchmark.class ]]; then
    mvnw_offline_first -q -Pbench test-compile
fi
if [[ ! -f "$S3PROXY_JAR" ]]; then
    echo "s3proxy jar not found at $S3PROXY_JAR (a provided dependency: ./mvnw test-compile fetches it)" >&2
    exit 1
fi
# The benchmark's classpath without s3proxy's self-contained jar (its bundled libraries clash).
mvnw_offline_first -q dependency:build-classpath -DexcludeArtifactIds=s3proxy -Dmdep.outputFile=target/bench-segments.cp

PORT=$(free_port)
S3_PORT=$(free_port)
S3_URL="http://127.0.0.1:$S3_PORT"
WORK=$(mktemp -d -t bench-segments.XXXXXX)

SERVER_PID=""
S3_PID=""
cleanup() {
    stop_pid "$SERVER_PID" server
    stop_pid "$S3_PID" s3proxy
    if command -v psql >/dev/null; then
        pg_psql -c "DROP SCHEMA IF EXISTS \"$PG_SCHEMA\" CASCADE" >/dev/null 2>&1 \
            || echo "note: could not drop schema $PG_SCHEMA" >&2
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

# ------------------------------------------------------------------------------------------------ s3proxy
cat >"$WORK/s3proxy.conf" <<EOF
s3proxy.endpoint=$S3_URL
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=$S3_ACCESS_KEY
s3proxy.credential=$S3_SECRET_KEY
jclouds.provider=transient
jclouds.identity=$S3_ACCESS_KEY
jclouds.credential=$S3_SECRET_KEY
EOF
echo "== starting s3proxy on $S3_URL (log $S3_LOG)" >&2
# shellcheck disable=SC2086
java $S3PROXY_JAVA_OPTS -jar "$S3PROXY_JAR" --properties "$WORK/s3proxy.conf" >"$S3_LOG" 2>&1 &
S3_PID=$!
wait_for "$S3_URL/" "$S3_PID" s3proxy "$S3_LOG"
# A SigV4-signed CreateBucket (curl signs; s3proxy wants the payload hash header, here of the empty body).
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
status=$(curl -s -o "$WORK/create-bucket.out" -w '%{http_code}' --aws-sigv4 "aws:amz:$S3_REGION:s3" \
    --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" -H "x-amz-content-sha256: $EMPTY_SHA256" -X PUT "$S3_URL/$S3_BUCKET")
if [[ "$status" != 200 ]]; then
    echo "creating bucket $S3_BUCKET failed ($status): $(cat "$WORK/create-bucket.out")" >&2
    exit 1
fi
status=$(curl -s -o /dev/null -w '%{http_code}' "$S3_URL/$S3_BUCKET?list-type=2")
echo "== bucket $S3_BUCKET created (anonymous listing answers $status: signatures are checked)" >&2

# ------------------------------------------------------------------------------------------------- server
echo "== server JVM options: $SERVER_JAVA_OPTS" >&2
echo "== starting the server on port $PORT (storage schema $PG_SCHEMA; segments in s3://$S3_BUCKET/bench/; log $LOG)" >&2
start_server "$LOG" \
    -Dsyncular.segments.store=s3 \
    -Dsyncular.s3.bucket="$S3_BUCKET" \
    -Dsyncular.s3.key-prefix=bench/ \
    -Dsyncular.s3.presign-ttl=10m \
    -Dsyncular.limits.max-operations-per-request="$((SEED_BATCH * SEED_COMMITS))" \
    -Dquarkus.s3.endpoint-override="$S3_URL" \
    -Dquarkus.s3.path-style-access=true \
    -Dquarkus.s3.aws.region="$S3_REGION" \
    -Dquarkus.s3.aws.credentials.type=static \
    -Dquarkus.s3.aws.credentials.static-provider.access-key-id="$S3_ACCESS_KEY" \
    -Dquarkus.s3.aws.credentials.static-provider.secret-access-key="$S3_SECRET_KEY"
wait_for "http://127.0.0.1:$PORT/q/health/ready" "$SERVER_PID" server "$LOG" ok
echo "== server ready (pid $SERVER_PID), s3proxy pid $S3_PID" >&2
METRICS=$(curl -sf "http://127.0.0.1:$MANAGEMENT_PORT/q/metrics" || true)
if ! grep -q '^jvm_memory_used_bytes{area="heap"' <<<"$METRICS"; then
    echo "note: /q/metrics exposes no jvm_memory_used_bytes{area=\"heap\"}: heap figures will read n/a" >&2
fi

PG_PID=$(postmaster_pid)
PG_VERSION=$(pg_psql -c 'SHOW server_version' 2>/dev/null || echo unknown)

machine_line >&2

status=0
# shellcheck disable=SC2086
java -Xmx1g -Dbench.pgPid="$PG_PID" -Dbench.pgVersion="$PG_VERSION" -Dbench.seedBatch="$SEED_BATCH" \
    -Dbench.seedCommitsPerRequest="$SEED_COMMITS" -Dbench.metricsUrl="http://127.0.0.1:$MANAGEMENT_PORT/q/metrics" \
    -Dbench.serverOpts="$SERVER_JAVA_OPTS" ${BENCH_OPTS:-} \
    -cp "target/classes:target/test-classes:$(cat target/bench-segments.cp)" \
    dev.syncular.server.bench.SegmentsBenchmark "http://127.0.0.1:$PORT" "$SERVER_PID" "$SCHEMA_FILE" "$S3_PID" \
    || status=$?
if grep -qE ' (WARN|ERROR) ' "$LOG"; then
    echo "== server log warnings/errors ($LOG):" >&2
    grep -E ' (WARN|ERROR) ' "$LOG" | grep -v 'postgresql.queue.size' | tail -n 20 >&2 || true
fi
exit $status
