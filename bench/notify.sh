#!/usr/bin/env bash
# What a NOTIFY inside the commit costs PostgreSQL (docs/BENCHMARKS.md, "Many partitions"; docs/SCALING.md).
# Not a test.
#
# Usage: bench/notify.sh
#
# pgbench with 20 clients over 1,000 keys, one 200-byte insert per transaction, three ways, each RUNS times
# interleaved: the insert alone; the insert and pg_notify in one transaction (how every commit is announced today,
# §8.2); the insert, then pg_notify in a transaction of its own. PostgreSQL serializes the commit of every
# notifying transaction on one cluster-wide lock, so the second line is the ceiling of announced commits per second
# whatever the number of partitions. Then two group transactions of ten inserts each (a group of ten pushes to one
# partition): a pg_notify after every insert (as today), and one pg_notify for the group (SCALING.md, design 1);
# their lines give inserts (commits) per second. Works in a table of its own (nb_log), dropped at the end.
#
# Environment:
#   SYNCULAR_PG_URL       PostgreSQL URL (default postgresql://127.0.0.1:5432/syncular_test)
#   SYNCULAR_PG_USER / SYNCULAR_PG_PASSWORD   (default syncular / syncular)
#   SECONDS_EACH          seconds per pgbench run (default 10)
#   RUNS                  repetitions of the three (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."

PG_URL="${SYNCULAR_PG_URL:-postgresql://127.0.0.1:5432/syncular_test}"
PG_USER="${SYNCULAR_PG_USER:-syncular}"
PG_PASSWORD="${SYNCULAR_PG_PASSWORD:-syncular}"
SECONDS_EACH="${SECONDS_EACH:-10}"
RUNS="${RUNS:-2}"
# shellcheck source=bench/lib.sh
source bench/lib.sh
PGBENCH="$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench 2>/dev/null | tail -n 1 || true)"
[[ -n "$PGBENCH" ]] || { echo "pgbench not found (Debian: postgresql)" >&2; exit 2; }
rest="${PG_URL#postgresql://}"
hostport="${rest%%/*}" db="${rest#*/}"
db="${db%%\?*}"
dir=$(mktemp -d)
trap 'rm -rf "$dir"; pg_psql -c "DROP TABLE IF EXISTS nb_log" >/dev/null 2>&1 || true' EXIT
pg_psql -c "DROP TABLE IF EXISTS nb_log" >/dev/null
pg_psql -c "CREATE TABLE nb_log (p int, seq bigserial, payload text, PRIMARY KEY (p, seq))" >/dev/null
cat >"$dir/insert.sql" <<'SQL'
\set p random(1, 1000)
INSERT INTO nb_log (p, payload) VALUES (:p, repeat('x', 200));
SQL
cat >"$dir/notify-in-commit.sql" <<'SQL'
\set p random(1, 1000)
WITH i AS (INSERT INTO nb_log (p, payload) VALUES (:p, repeat('x', 200))), n AS (SELECT pg_notify('nb_chan', :p::text)) SELECT 1 FROM n;
SQL
cat >"$dir/notify-after-commit.sql" <<'SQL'
\set p random(1, 1000)
INSERT INTO nb_log (p, payload) VALUES (:p, repeat('x', 200));
SELECT pg_notify('nb_chan', :p::text);
SQL
{
    echo '\set p random(1, 1000)'
    echo 'BEGIN;'
    for i in $(seq 1 10); do
        echo "WITH i AS (INSERT INTO nb_log (p, payload) VALUES (:p, repeat('x', 200))), n AS (SELECT pg_notify('nb_chan', :p::text)) SELECT 1 FROM n;"
    done
    echo 'COMMIT;'
} >"$dir/group-notify-each.sql"
{
    echo '\set p random(1, 1000)'
    echo 'BEGIN;'
    for i in $(seq 1 10); do
        echo "INSERT INTO nb_log (p, payload) VALUES (:p, repeat('x', 200));"
    done
    echo "SELECT pg_notify('nb_chan', :p::text);"
    echo 'COMMIT;'
} >"$dir/group-notify-once.sql"
machine_line >&2
for r in $(seq 1 "$RUNS"); do
    for s in insert notify-in-commit notify-after-commit group-notify-each group-notify-once; do
        tps=$(PGPASSWORD="$PG_PASSWORD" "$PGBENCH" -h "${hostport%%:*}" -p "${hostport##*:}" -U "$PG_USER" -n -c 20 -j 2 \
            -T "$SECONDS_EACH" -f "$dir/$s.sql" "$db" 2>/dev/null | grep -E '^tps' | grep -oE '[0-9]+\.[0-9]+' | head -n1)
        case "$s" in
        group-*) echo "run $r: $s: $tps tps, $(awk -v t="$tps" 'BEGIN { printf "%.0f", t * 10 }') inserts/s" ;;
        *) echo "run $r: $s: $tps tps" ;;
        esac
    done
done
