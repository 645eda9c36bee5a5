#!/usr/bin/env bash
# Realtime benchmark (docs/BENCHMARKS.md, "Realtime"). Not a test.
#
# Usage: bench/realtime.sh
#
# Packages the app (offline) and runs dev.syncular.server.bench.RealtimeBenchmark, which starts the packaged
# server itself (one pod, then a second on the same database; the chart's JVM flags) in a fresh storage schema
# and measures: (a) 10,000 idle authenticated sockets and the pod's RSS and heap; (b) 1,000 sockets over 100
# scopes while a writer commits 100 commits/s, push-to-delta latency; (c) the same with the writer on pod A and
# the sockets on pod B; (d) socket rounds/s against HTTP rounds/s; (e) one commit fanned out to 10,000 sockets of
# one scope on one pod, 10 commits 500 ms apart: per commit the first, p50, p99 and last socket's delta, the
# sockets that got a wake-up or nothing, the pod's CPU and RSS. Named only: (f) a reconnect storm, 10,000 clients
# dropped at once 10 times, each reconnecting after a random delay up to 5 s (100,000 reconnects up to hello):
#   BENCH_OPTS="-Dbench.phases=f" bench/realtime.sh
#
# The load generator opens -Dbench.socketsPerAddress (20,000) sockets from each loopback source address,
# 127.0.0.2, 127.0.0.3, ... (one address has only net.ipv4.ip_local_port_range ports to the server's port).
# Every socket is an open file here and in the pod, which inherits this script's limit: ulimit -n is raised to
# BENCH_NOFILE, or to the hard limit when that is refused (raising the hard limit needs root, up to fs.nr_open).
# 100,000 idle sockets (docs/BENCHMARKS.md, "Realtime"):
#   BENCH_NOFILE=262144 BENCH_JAVA_OPTS=-Xmx2g \
#     BENCH_OPTS="-Dbench.phases=a -Dbench.idleSockets=100000 -Dbench.serverHeap=2g" bench/realtime.sh
#
# Environment:
#   SYNCULAR_TEST_PG_URL  PostgreSQL URL (default postgresql://127.0.0.1:5432/syncular_test)
#   SYNCULAR_TEST_PG_USER / SYNCULAR_TEST_PG_PASSWORD   (default syncular / syncular)
#   BENCH_OPTS            extra -D options, e.g. "-Dbench.idleSockets=2000 -Dbench.fanoutSec=10", or
#                         "-Dbench.phases=cd" to run only phases (c) and (d); (e): -Dbench.scopeSockets,
#                         -Dbench.scopeCommits, -Dbench.scopeCommitMs, -Dbench.scopeWarmupCommits; (a):
#                         -Dbench.idleHoldSec; the pod's heap: -Dbench.serverHeap=2g (the chart's 192m by default);
#                         -Dbench.podSocketBudget=true keeps the pod's own socket budget (a quarter of the heap;
#                         by default the benchmark makes room for every socket) and (e) counts the refused upgrades;
#                         (f): -Dbench.stormSockets, -Dbench.stormWaves, -Dbench.stormJitterMs; the pods' extra
#                         JVM flags: -Dbench.serverFlags="..." (e.g. a flight recording)
#   BENCH_JAVA_OPTS       the load generator's JVM options (default -Xmx1g)
#   BENCH_NOFILE          open-files limit to raise to (default 262144)
#   SKIP_PACKAGE=1        reuse target/quarkus-app and target/test-classes as they are
set -euo pipefail
cd "$(dirname "$0")/.."

export SYNCULAR_TEST_PG_URL="${SYNCULAR_TEST_PG_URL:-postgresql://127.0.0.1:5432/syncular_test}"
export SYNCULAR_TEST_PG_USER="${SYNCULAR_TEST_PG_USER:-syncular}"
export SYNCULAR_TEST_PG_PASSWORD="${SYNCULAR_TEST_PG_PASSWORD:-syncular}"
PG_URL="$SYNCULAR_TEST_PG_URL" PG_USER="$SYNCULAR_TEST_PG_USER" PG_PASSWORD="$SYNCULAR_TEST_PG_PASSWORD"

# shellcheck source=bench/lib.sh
source bench/lib.sh
package_and_classpath

machine_line >&2
# Open files: every socket is one descriptor in the load generator and one in the pod, which inherits this limit.
nofile="${BENCH_NOFILE:-262144}"
if [[ "$(ulimit -Sn)" != unlimited ]] && (($(ulimit -Sn) < nofile)) && ! ulimit -n "$nofile" 2>/dev/null; then
    ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
    echo "note: could not raise the open-files limit to $nofile (hard limit $(ulimit -Hn)); now $(ulimit -n)" >&2
fi
echo "== open files: soft $(ulimit -Sn), hard $(ulimit -Hn); $(sysctl -n net.ipv4.ip_local_port_range 2>/dev/null \
    | tr -s '\t ' '-' | sed 's/^/ephemeral ports /'); fs.nr_open $(sysctl -n fs.nr_open 2>/dev/null)" >&2
# this run's storage schema only: another run may be using the database at the same time
PG_SCHEMA="bench_rt_$(head -c 5 /dev/urandom | od -An -tx1 | tr -d ' \n')"
status=0
# shellcheck disable=SC2086
java ${BENCH_JAVA_OPTS:--Xmx1g} ${BENCH_OPTS:-} -Dbench.pgSchema="$PG_SCHEMA" \
    -cp "target/classes:target/test-classes:$(cat target/bench.cp)" \
    dev.syncular.server.bench.RealtimeBenchmark || status=$?
drop_schema
exit $status
