#!/usr/bin/env bash
# A local S3-compatible server for development, in one command: s3proxy (in memory, SigV4 signatures checked,
# presigned-URL expiry enforced) on http://127.0.0.1:4566 with the bucket my-app-sync, the configuration of
# docs/SEGMENTS.md "Run it locally against S3". Runs in the foreground; Ctrl-C stops it and forgets every object.
#
#   scripts/local-s3.sh                 # then start the server with the properties it prints, which it also writes
#                                       # to target/local-s3.properties
#
# Environment: S3_PORT (default 4566, a port no server process of ours takes: the API is 8080, its management interface 9080), S3_BUCKET (default my-app-sync). Needs java and curl (7.75+ for
# --aws-sigv4); the s3proxy jar comes from the local Maven repository (fetched once by ./mvnw when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${S3_PORT:-4566}"
BUCKET="${S3_BUCKET:-my-app-sync}"
ACCESS_KEY=syncular-local
SECRET_KEY=syncular-local-secret
REGION=us-east-1
URL="http://127.0.0.1:$PORT"
VERSION=$(sed -n 's:.*<s3proxy.version>\(.*\)</s3proxy.version>.*:\1:p' pom.xml)
JAR="${M2_REPO:-$HOME/.m2/repository}/org/gaul/s3proxy/$VERSION/s3proxy-$VERSION-jar-with-dependencies.jar"

if [[ ! -f "$JAR" ]]; then
    echo "== fetching s3proxy $VERSION into the local Maven repository" >&2
    ./mvnw -q dependency:get -Dartifact="org.gaul:s3proxy:$VERSION:jar:jar-with-dependencies" -Dtransitive=false
fi

WORK=$(mktemp -d -t syncular-s3.XXXXXX)
cat >"$WORK/s3proxy.conf" <<CONF
s3proxy.endpoint=$URL
s3proxy.authorization=aws-v2-or-v4
s3proxy.identity=$ACCESS_KEY
s3proxy.credential=$SECRET_KEY
jclouds.provider=transient
jclouds.identity=$ACCESS_KEY
jclouds.credential=$SECRET_KEY
CONF

java -Xmx512m -jar "$JAR" --properties "$WORK/s3proxy.conf" >"$WORK/s3proxy.log" 2>&1 &
PID=$!
trap 'kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

for _ in $(seq 1 300); do
    if ! kill -0 "$PID" 2>/dev/null; then
        echo "s3proxy exited:" >&2
        cat "$WORK/s3proxy.log" >&2
        exit 1
    fi
    if curl -s -o /dev/null "$URL/"; then
        break
    fi
    sleep 0.2
done

# CreateBucket, SigV4-signed by curl (s3proxy wants the payload hash header: here of the empty body).
EMPTY_SHA256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
status=$(curl -s -o "$WORK/create.out" -w '%{http_code}' --aws-sigv4 "aws:amz:$REGION:s3" \
    --user "$ACCESS_KEY:$SECRET_KEY" -H "x-amz-content-sha256: $EMPTY_SHA256" -X PUT "$URL/$BUCKET")
if [[ "$status" != 200 ]]; then
    echo "creating bucket $BUCKET failed ($status): $(cat "$WORK/create.out")" >&2
    exit 1
fi

mkdir -p target
cat >target/local-s3.properties <<PROPS
syncular.segments.store=s3
syncular.blobs.store=s3
syncular.s3.bucket=$BUCKET
syncular.s3.key-prefix=syncular/
quarkus.s3.endpoint-override=$URL
quarkus.s3.path-style-access=true
quarkus.s3.aws.region=$REGION
quarkus.s3.aws.credentials.type=static
quarkus.s3.aws.credentials.static-provider.access-key-id=$ACCESS_KEY
quarkus.s3.aws.credentials.static-provider.secret-access-key=$SECRET_KEY
PROPS
cat <<MSG
S3-compatible server on $URL (s3proxy $VERSION, in memory), bucket $BUCKET. Configure the server with these lines,
also written to target/local-s3.properties (-Dquarkus.config.locations=target/local-s3.properties):

$(cat target/local-s3.properties)

Ctrl-C stops it (pid $PID).
MSG
wait "$PID"
