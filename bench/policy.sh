#!/usr/bin/env bash
# The cost of declarative validators on the push path (docs/BENCHMARKS.md, "Application policy"). Not a test.
#
# Usage: bench/policy.sh
#
# Runs the push-pull part of bench/sync.sh (20 clients; no bootstrap) back to back, alternating a server with no
# policy and one with two declarative row validators (§6.7: maxLength on notes.title, immutableWhen on
# notes.title guarded by the stored notes.priority — a guard value the benchmark never writes, so every
# update reads and compares the stored row and nothing is rejected), ROUNDS times each (default 2), each run on a fresh server and
# storage schema. Prints every run's figures; compare the "push-pull" lines.
#
# Environment: as bench/sync.sh (SYNCULAR_PG_URL, SERVER_JAVA_OPTS, ...), plus
#   ROUNDS      runs per setting (default 2)
#   BENCH_OPTS  default "-Dbench.bootstrapSizes= -Dbench.warmupSec=20 -Dbench.measureSec=20"
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS="${ROUNDS:-2}"
export BENCH_OPTS="${BENCH_OPTS:--Dbench.bootstrapSizes= -Dbench.warmupSec=20 -Dbench.measureSec=20}"
POLICY="$PWD/target/bench-policy.json"
mkdir -p target
cat >"$POLICY" <<'JSON'
{"validators": [
  {"table": "notes", "rule": {"maxLength": {"column": "title", "max": 200, "code": "app.title_too_long"}}},
  {"table": "notes", "rule": {"immutableWhen": {"column": "title", "guardColumn": "priority", "guardValue": -1,
                                                "code": "app.archived_note_frozen"}}}
]}
JSON

# shellcheck source=bench/lib.sh
source bench/lib.sh
mvnw_offline_first -q -Pbench package -DskipTests
for round in $(seq 1 "$ROUNDS"); do
    for setting in off on; do
        echo "== round $round, validators $setting" >&2
        if [[ "$setting" == on ]]; then
            SKIP_PACKAGE=1 SYNCULAR_POLICY_FILE="$POLICY" bench/sync.sh 2>&1 | grep -E "Push-pull|^\| [0-9]|rounds/s|==" || true
        else
            SKIP_PACKAGE=1 bench/sync.sh 2>&1 | grep -E "Push-pull|^\| [0-9]|rounds/s|==" || true
        fi
    done
done
