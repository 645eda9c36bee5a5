#!/usr/bin/env bash
# Walkthrough against a running server with the bundled quickstart schema (./mvnw quarkus:dev): Alice pushes a
# todo, Bob bootstraps the list, Alice edits the todo with optimistic concurrency, Bob pulls the change. Each
# step is one run of the command-line client (target/syncular-cli.jar, built here when missing or stale), every
# SSP2 response printed as its §11.1 debug JSON. Each run uses a fresh partition (x-syncular-partition).
# For your own schema, run the CLI yourself: README, "Command-line client".
# Usage: bench/demo.sh [base-url]     (default http://localhost:8080)
set -euo pipefail
cd "$(dirname "$0")/.."

BASE="${1:-http://localhost:8080}"
CLI=target/syncular-cli.jar
SCHEMA=src/main/resources/schema/quickstart.syncular.ir.json

if [[ ! -f $CLI || -n $(find pom.xml src/main/java/dev/syncular/server/{cli,wire,schema} -newer "$CLI" -print -quit) ]]; then
    echo "Building $CLI" >&2
    # Only the CLI: no Quarkus build, no tests.
    ./mvnw -o -q package -Dmaven.test.skip=true -Dquarkus.build.skip=true \
        || ./mvnw -q package -Dmaven.test.skip=true -Dquarkus.build.skip=true
fi

STATE=$(mktemp -d)
trap 'rm -rf "$STATE"' EXIT
RUN=$(date +%s)
ID="todo-$RUN"

cli() { # actor command [args...]
    local actor="$1"
    shift
    if ! java -jar "$CLI" --url "$BASE" --schema "$SCHEMA" --state "$STATE/$actor.json" --actor "$actor" \
        --partition "demo-$RUN" "$@"; then
        echo "demo.sh: the step failed (the CLI's message is above). The demo uses the bundled quickstart schema" \
            "(table todos): is the server at $BASE running it (./mvnw quarkus:dev)? For another schema, run the" \
            "CLI yourself (README, \"Command-line client\")." >&2
        exit 1
    fi
}
step() { printf '\n== %s\n' "$*"; }

cli alice subscribe todos todos list_id=groceries >/dev/null
cli bob subscribe todos todos list_id=groceries >/dev/null

step "Alice pushes a todo: her first round learns the partition's log epoch (§2.1), the second pushes and pulls"
cli alice push todos "{\"id\":\"$ID\",\"list_id\":\"groceries\",\"title\":\"Buy milk\",\"done\":false,\"position\":1,\"updated_at_ms\":$(date +%s000)}"

step "Bob bootstraps the groceries list (a rows segment, §5), its rows decoded (--decode)"
BOOT=$(cli bob bootstrap --decode)
echo "$BOOT"
VERSION=$(grep -o '"serverVersion" : [0-9]*' <<<"$BOOT" | head -n 1 | grep -o '[0-9]*$' || true)
[[ -n $VERSION ]] || { echo "demo.sh: Bob's bootstrap did not bring $ID" >&2; exit 1; }

step "Alice renames it, based on version $VERSION (optimistic concurrency, §6.2)"
cli alice push todos "{\"id\":\"$ID\",\"title\":\"Buy oat milk\",\"updated_at_ms\":$(date +%s000),\"\$baseVersion\":$VERSION}"

step "Bob pulls the change incrementally from his stored cursor (§4.5), decoded"
cli bob pull --decode
