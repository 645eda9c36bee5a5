#!/usr/bin/env bash
# §5.3 SQLite image build benchmark (docs/BENCHMARKS.md, "SQLite images"). Not part of the test suite.
# Usage: bench/sqlite.sh           (extra JVM -D options may be passed via BENCH_OPTS,
#                                   e.g. BENCH_OPTS="-Dbench.iterations=5 -Dbench.sizes=1000000")
# Runs with a 256 MiB heap: the builder streams batches, so the heap stays bounded whatever the row count.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=bench/lib.sh
source bench/lib.sh
mvnw_offline_first -q -Pbench test-compile -DskipTests
bench_classpath

# shellcheck disable=SC2086
exec java -Xmx256m ${BENCH_OPTS:-} -cp "target/classes:target/test-classes:$(cat target/bench.cp)" \
    dev.syncular.server.bench.SqliteImageBenchmark "$@"
