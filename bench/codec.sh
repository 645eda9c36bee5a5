#!/usr/bin/env bash
# SSP2 codec micro-benchmark (docs/BENCHMARKS.md, "Codec"). Not part of the test suite.
# Usage: bench/codec.sh            (extra JVM -D options may be passed via BENCH_OPTS,
#                                   e.g. BENCH_OPTS="-Dbench.iterations=30")
set -euo pipefail
cd "$(dirname "$0")/.."

./mvnw -o -q test-compile -DskipTests
if ! ./mvnw -o -q dependency:build-classpath -Dmdep.outputFile=target/bench.cp; then
    echo "offline dependency:build-classpath failed; retrying online once" >&2
    ./mvnw -q dependency:build-classpath -Dmdep.outputFile=target/bench.cp
fi

# shellcheck disable=SC2086
exec java -Xmx1g ${BENCH_OPTS:-} -cp "target/classes:target/test-classes:$(cat target/bench.cp)" \
    dev.syncular.server.bench.CodecBenchmark "$@"
