#!/usr/bin/env bash
# yjs-doc CRDT merge micro-benchmark (docs/BENCHMARKS.md, "CRDT merge"). Not part of the test suite.
# Usage: bench/crdt.sh            (extra JVM -D options may be passed via BENCH_OPTS,
#                                  e.g. BENCH_OPTS="-Dbench.keystrokes=2000 -Dbench.docChars=50000")
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=bench/lib.sh
source bench/lib.sh
mvnw_offline_first -q -Pbench test-compile -DskipTests
bench_classpath

# shellcheck disable=SC2086
exec java -Xmx1g ${BENCH_OPTS:-} -cp "target/classes:target/test-classes:$(cat target/bench.cp)" \
    dev.syncular.server.bench.CrdtMergeBenchmark "$@"
