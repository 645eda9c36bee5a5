#!/usr/bin/env bash
# SSP2 codec micro-benchmark (docs/BENCHMARKS.md, "Codec"). Not part of the test suite.
# Usage: bench/codec.sh            (extra JVM -D options may be passed via BENCH_OPTS,
#                                   e.g. BENCH_OPTS="-Dbench.iterations=30")
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=bench/lib.sh
source bench/lib.sh
mvnw_offline_first -q -Pbench test-compile -DskipTests
bench_classpath

# shellcheck disable=SC2086
exec java -Xmx1g ${BENCH_OPTS:-} -cp "target/classes:target/test-classes:$(cat target/bench.cp)" \
    dev.syncular.server.bench.CodecBenchmark "$@"
