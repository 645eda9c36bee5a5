#!/usr/bin/env bash
# Walkthrough against a running server: push a row as one client, pull it back as another, print every
# SSP2 response as its §11.1 debug JSON. Start the server first (./mvnw quarkus:dev).
# Usage: bench/demo.sh [base-url]     (default http://localhost:8080)
set -euo pipefail
cd "$(dirname "$0")/.."

./mvnw -o -q test-compile -DskipTests
if ! ./mvnw -o -q dependency:build-classpath -Dmdep.outputFile=target/bench.cp; then
    ./mvnw -q dependency:build-classpath -Dmdep.outputFile=target/bench.cp
fi
exec java -cp "target/classes:target/test-classes:$(cat target/bench.cp)" dev.syncular.server.tools.DemoClient "$@"
