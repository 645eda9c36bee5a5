#!/usr/bin/env bash
# Long fault campaign (src/test/java/dev/syncular/server/faults/FaultCampaignIT.java). Not a benchmark: a soak test that
# runs the failsafe IT alone, for MINUTES instead of its default few steps. Two packaged pods on a throwaway
# PostgreSQL, 8 simulated clients (HTTP and realtime socket) doing seeded random work, and a fault schedule drawn from
# SEED (kill -9 of a pod and its restart, PostgreSQL restarted, a LISTEN backend terminated, a pod started while
# PostgreSQL is down, responses dropped after commit, sockets cut) until MINUTES have passed; then quiescence and the
# invariants (commits exactly once and dense, retries answered cached, client rows equal the server's, cursors never
# back, readiness back within 30 s).
#
# Usage: bench/chaos.sh SEED MINUTES
#
# Pod a is never killed (-Dcampaign.sparedPod=0; CHAOS_OPTS="-Dcampaign.sparedPod=-1" kills both), so its samples
# span the whole run: a leak shows as RSS or descriptors growing from sample to sample.
# The IT samples each pod's RSS and open file descriptors every 30 s (target/it-logs/campaign-samples.log); this script
# prints them as a table at the end, with the campaign's summary line, and the first and last sample of each pod.
# A failure prints the seed and the executed fault schedule: rerun the same campaign with the same SEED.
#
# Environment:
#   SKIP_PACKAGE=1   reuse target/quarkus-app as it is (otherwise ./mvnw package runs first, as verify does)
#   CHAOS_OPTS       extra -D options for the IT
#   CHAOS_IT         FailoverCampaignIT: the same campaign on a pg_auto_failover formation, failovers instead of
#                    PostgreSQL restarts (needs pg-auto-failover-cli postgresql-15-auto-failover; default FaultCampaignIT)
set -euo pipefail
cd "$(dirname "$0")/.."

if [[ $# -ne 2 ]]; then
    echo "usage: bench/chaos.sh SEED MINUTES" >&2
    exit 2
fi
seed="$1"
minutes="$2"

# shellcheck source=bench/lib.sh
source bench/lib.sh

mkdir -p target/it-logs
samples=target/it-logs/campaign-samples.log
out=target/it-logs/chaos-"$seed".out
rm -f "$samples"

machine_line >&2
echo "== fault campaign: seed $seed, $minutes min (output in $out)" >&2
status=0
if [[ "${SKIP_PACKAGE:-}" == 1 ]]; then
    goals=(test-compile failsafe:integration-test failsafe:verify)
else
    goals=(verify -Dtest=NoSuchTest -Dsurefire.failIfNoSpecifiedTests=false)
fi
it="${CHAOS_IT:-FaultCampaignIT}"
# offline only: mvnw_offline_first would run a failed campaign a second time
# shellcheck disable=SC2086
./mvnw -o "${goals[@]}" -Dit.test="$it" -Dcampaign.seed="$seed" -Dcampaign.minutes="$minutes" \
    -Dcampaign.sparedPod=0 ${CHAOS_OPTS:-} >"$out" 2>&1 || status=$?

echo "== RSS and open file descriptors of the pods (every 30 s; a restarted pod has a new pid)"
if [[ -f "$samples" ]]; then
    awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
           printf "%6s  %-5s pod %s  pid %-7s rss %5s MiB  fds %s\n", v["t"], v["phase"], v["pod"], v["pid"], v["rss_mib"], v["fds"] }' \
        "$samples"
    for pod in a b; do
        first=$(grep "pod=$pod " "$samples" | head -n1)
        last=$(grep "pod=$pod " "$samples" | tail -n1)
        echo "pod $pod: first [$first] last [$last]"
    done
else
    echo "no samples (the IT did not start?)"
fi
echo "== summary"
grep -E '^campaign seed=' "$out" || echo "no summary line"
if [[ $status -ne 0 ]]; then
    echo "== the campaign FAILED (exit $status); the seed and the executed schedule:" >&2
    grep -E -A40 'invariant\(s\) broken|the campaign failed|quiescence failed|a client crashed' "$out" | head -n 80 >&2 || true
    if [[ "$it" == FailoverCampaignIT ]]; then logs=failover-campaign; else logs=fault-campaign; fi
    echo "full output: $out; pod logs: target/it-logs/$logs-{a,b}.log" >&2
fi
exit $status
