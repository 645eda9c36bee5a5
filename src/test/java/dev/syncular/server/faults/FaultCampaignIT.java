package dev.syncular.server.faults;

import dev.syncular.server.testsupport.CampaignClient;
import dev.syncular.server.testsupport.FaultSchedule;
import dev.syncular.server.testsupport.PodClocks;
import dev.syncular.server.testsupport.RestartableS3;
import dev.syncular.server.testsupport.StartsProcesses;
import dev.syncular.server.testsupport.ThrowawayPostgres;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A seeded, repeatable fault campaign: two packaged server processes (pods) on one PostgreSQL of the test's own
 * ({@link ThrowawayPostgres}, so it can be restarted) with a streaming hot standby, the pods' read replica for pull-only
 * rounds ({@code syncular.storage.replicas}), segments on an S3 stand-in of its own ({@link RestartableS3}; none inlined,
 * so every bootstrap goes through it), the bundled schema, and {@value FaultCampaign#CLIENTS} simulated
 * clients ({@link CampaignClient}: every third on the realtime socket, the others over HTTP) doing random work — new
 * rows, conflicting edits of shared rows with base versions, deletes, offline outboxes, subscriptions added and removed
 * — each round to a random pod, a failed round retried with the same outbox (§2.3, §7.2). Meanwhile a
 * {@link FaultSchedule} drawn from the same seed injects faults: {@code kill -9} of a pod and its restart, a PostgreSQL
 * restart, a pod's LISTEN backend terminated, a pod started while PostgreSQL is down, responses discarded after the
 * commit, sockets cut, replay on the standby paused and resumed, the S3 stand-in stopped and started again with the
 * same objects (no round may be answered 5xx meanwhile), a pod's wall clock stepped ten minutes ahead or back and set
 * right again ({@link PodClocks}: an NTP step; its monotonic clock and PostgreSQL's run on; no round may be answered
 * 5xx meanwhile). The same campaign on a pg_auto_failover formation, with
 * failovers instead of restarts: {@link FailoverCampaignIT}.
 *
 * <p>After the schedule: quiescence (every client syncs until idle), then the invariants, in SQL on the campaign's
 * database and in the clients: (1) every acknowledged commit is in the commit log exactly once with the acknowledged
 * sequence number, rejected ones are not, the log is dense, one idempotency record each; (2) a retried acknowledged
 * commit answers {@code cached} with its sequence number (a discarded response's retry during the run, and a sample
 * resent at the end); (3) each client's rows equal the server's rows of its subscriptions' lists, and a fresh client's
 * bootstrap equals the server's rows; (4) no subscription cursor went back; (5) every pod reports ready within
 * {@link FaultCampaign#READY_BOUND} after each fault healed (the measured maximum is printed); (6) every subscription a
 * client still holds applied, after its bootstrap and up to its cursor, exactly the commits of the log changing a row
 * of its list, each once and in order ({@link CampaignClient#checkDeliveries}; a reset or a changed epoch starts the
 * sequence over at the new bootstrap).
 *
 * <p>Properties: {@code -Dcampaign.seed=N[,M…]} (default three fixed seeds), {@code -Dcampaign.steps} (fault steps per
 * seed, default: every kind once), {@code -Dcampaign.sparedPod=0|1} (a pod never killed, whose RSS and descriptors
 * then span the whole run), {@code -Dcampaign.minutes} (instead of steps: faults until that much time has
 * passed; the pods' RSS and open file descriptors are then sampled every 30 s into the output and
 * {@code target/it-logs/campaign-samples.log}; {@code bench/chaos.sh}). A failure prints the seed and the executed
 * schedule, then replays shorter schedules of its steps as whole campaigns on the same deployment ({@link
 * dev.syncular.server.testsupport.ScheduleShrinker}; for up to {@code -Dcampaign.shrinkMinutes}, default 10, 0 for
 * none) and prints the shortest that still failed with its {@code -Dcampaign.replay} value, which runs exactly those
 * steps. {@code -Dcampaign.seededDefect=KIND} checks the harness: every campaign executing a step of that kind fails,
 * and the shrinking must end at one step of it.
 */
@StartsProcesses
class FaultCampaignIT {
    static CampaignDeployment deployment;

    @BeforeAll
    static void start() throws Exception {
        RestartableS3 s3 = RestartableS3.start();
        try {
            deployment = CampaignDeployment.start(
                    "fault-campaign", startDatabase(), Optional.of(s3), Optional.of(PodClocks.start()));
        } catch (Exception | Error e) {
            s3.close();
            throw e;
        }
    }

    /** The campaign's cluster with a streaming standby, the pods' read replica. */
    static ThrowawayPostgres startDatabase() throws Exception {
        ThrowawayPostgres pg = ThrowawayPostgres.start();
        try {
            return pg.withStandby();
        } catch (Exception | Error e) {
            pg.close();
            throw e;
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (deployment != null) {
            deployment.close();
        }
    }

    static Stream<Long> seeds() {
        return FaultCampaign.seeds(1L, 2L, 3L);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void campaign(long seed) throws Exception {
        FaultCampaign.run(deployment, seed);
    }
}
