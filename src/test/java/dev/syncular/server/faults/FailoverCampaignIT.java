package dev.syncular.server.faults;

import dev.syncular.server.testsupport.AutoFailoverFormation;
import dev.syncular.server.testsupport.FaultSchedule;
import dev.syncular.server.testsupport.StartsProcesses;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The fault campaign ({@link FaultCampaignIT}: two packaged pods, the same clients, schedule and invariants) on a
 * PostgreSQL run by a real HA manager: a pg_auto_failover formation of the test's own ({@link AutoFailoverFormation}:
 * a monitor, a primary and its synchronous standby), which the pods reach through a host list, the write endpoint of
 * a failover pair ({@code quarkus.datasource.reactive.url}, {@code storage.postgres.ReadWriteTarget}). Besides the pods' and
 * clients' faults the schedule draws the HA manager's: a planned failover ({@link FaultSchedule.Kind#FAILOVER},
 * {@code pg_autoctl perform failover}) and the primary node killed ({@link FaultSchedule.Kind#KILL_PRIMARY}: the
 * monitor promotes the standby by itself, the node rejoins as the standby later). The pods must follow each new
 * primary with no restart — readiness back within the bound after each failover (invariant 5) — and every commit
 * acknowledged before a failover must be on the new primary, exactly once, the log dense (invariant 1): the standby is
 * synchronous, so a commit is acknowledged only once the standby has it.
 *
 * <p>Needs pg_auto_failover installed ({@value AutoFailoverFormation#PACKAGES}, Debian or Ubuntu; {@code .ci/run}
 * installs it): without it the test fails naming the packages, it is never skipped. One seed by default (every kind
 * once, about a minute); the properties of {@link FaultCampaignIT} apply ({@code -Dcampaign.seed}, {@code
 * -Dcampaign.steps}, {@code -Dcampaign.minutes}, {@code bench/chaos.sh} with {@code CHAOS_IT=FailoverCampaignIT}).
 */
@StartsProcesses
class FailoverCampaignIT {
    static CampaignDeployment deployment;

    @BeforeAll
    static void start() throws Exception {
        AutoFailoverFormation formation = AutoFailoverFormation.start();
        System.out.println("failover campaign: the pg_auto_failover formation (monitor, primary, synchronous standby)"
                + " started in " + formation.startedMs() + " ms");
        deployment = CampaignDeployment.start("failover-campaign", formation);
    }

    @AfterAll
    static void stop() throws Exception {
        if (deployment != null) {
            deployment.close();
        }
    }

    static Stream<Long> seeds() {
        return FaultCampaign.seeds(4L);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void campaign(long seed) throws Exception {
        FaultCampaign.run(deployment, seed);
    }
}
