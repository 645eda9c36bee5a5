package dev.syncular.server.console;

import dev.syncular.server.health.ServeGateReadinessCheck;
import dev.syncular.server.storage.CheckpointStorage;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.sync.SyncEngine;
import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateData;
import io.quarkus.qute.TemplateInstance;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import jakarta.ws.rs.CookieParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;
import org.eclipse.microprofile.openapi.annotations.Operation;

/**
 * The overview: this pod's serve gate as readiness sees it (§2.4: UP, or DOWN with its reason), the pending
 * checkpoints at the running schema version (and whether this build declares each), the open realtime sockets,
 * the rounds that ended in an error by code, and the time series of {@link MeterRing}.
 */
@Path("/console/overview")
@ConsoleRoute
public class OverviewPage {
    @CheckedTemplate
    static class Templates {
        static native TemplateInstance overview(ConsoleChrome chrome, Overview view);
    }

    /** One pending checkpoint and whether this build declares it (else it holds every pod's readiness down). */
    @TemplateData
    record Pending(String partition, String name, String state, int schemaVersion, boolean declaredHere) {}

    /** A count by code. */
    @TemplateData
    record Count(String code, long count) {}

    @TemplateData
    record Overview(
            String gateStatus,
            String gateReason,
            int runningSchemaVersion,
            List<Pending> pending,
            long openSockets,
            List<Count> errors,
            List<Charts.Chart> charts) {}

    @Inject
    ConsoleAccess access;

    @Inject
    @Readiness
    ServeGateReadinessCheck readiness;

    @Inject
    CheckpointStorage checkpoints;

    @Inject
    SyncEngine engine;

    @Inject
    MeterRing meters;

    @GET
    @Operation(hidden = true)
    public Uni<jakarta.ws.rs.core.Response> overview(@CookieParam(ConsoleAccess.COOKIE) String cookie) {
        return access.page("GET /console/overview", cookie, s -> {
            int running = engine.gates().runningSchemaVersion();
            return readiness
                    .call()
                    .flatMap(health -> checkpoints
                            .readPendingCheckpoints(running)
                            .map(list -> {
                                List<Pending> pending = new ArrayList<>();
                                for (StoredCheckpoint c : list) {
                                    pending.add(new Pending(
                                            c.partition(),
                                            c.name(),
                                            c.state().dbName,
                                            c.schemaVersion(),
                                            engine.gates().declaredHere(c.partition(), c.name())));
                                }
                                List<Count> errors = new ArrayList<>();
                                meters.errorTotals().forEach((code, n) -> errors.add(new Count(code, n)));
                                List<MeterRing.Sample> samples = meters.samples();
                                List<Charts.Chart> charts = List.of(
                                        Charts.chart(
                                                "commits",
                                                "Commits/s",
                                                "/s",
                                                samples,
                                                MeterRing.Sample::commitsPerSecond),
                                        Charts.chart(
                                                "rounds", "Rounds/s", "/s", samples, MeterRing.Sample::roundsPerSecond),
                                        Charts.chart(
                                                "delta-latency",
                                                "Delta latency",
                                                "ms",
                                                samples,
                                                MeterRing.Sample::deltaLatencyMs),
                                        Charts.chart(
                                                "sockets", "Open sockets", "", samples, MeterRing.Sample::openSockets),
                                        Charts.chart(
                                                "errors",
                                                "Errors/interval",
                                                "",
                                                samples,
                                                x -> x.errors().values().stream()
                                                        .mapToLong(Long::longValue)
                                                        .sum()));
                                Map<String, Object> data = health.getData().orElse(Map.of());
                                Overview view = new Overview(
                                        health.getStatus() == HealthCheckResponse.Status.UP ? "UP" : "DOWN",
                                        String.valueOf(data.getOrDefault("reason", "")),
                                        running,
                                        pending,
                                        Math.round(meters.openSockets()),
                                        errors,
                                        charts);
                                return SignInPage.html(
                                        200,
                                        Templates.overview(ConsoleChrome.of(access, s, "Overview"), view)
                                                .render());
                            }));
        });
    }
}
