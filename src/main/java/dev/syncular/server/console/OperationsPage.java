package dev.syncular.server.console;

import dev.syncular.server.operations.CommandRegistry;
import dev.syncular.server.operations.QueryDefinition;
import dev.syncular.server.operations.QueryRegistry;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateData;
import io.quarkus.qute.TemplateInstance;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import jakarta.ws.rs.CookieParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.core.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.microprofile.openapi.annotations.Operation;

/**
 * Remote operations (REMOTE.md): the registered queries and commands with what this pod answered since it
 * started — calls, errors by code, mean latency — from the {@code syncular.operations} meters
 * ({@code observability.OperationMetrics}); per-pod, like every meter.
 */
@Path("/console/operations")
@ConsoleRoute
public class OperationsPage {
    @CheckedTemplate
    static class Templates {
        static native TemplateInstance operations(ConsoleChrome chrome, List<Op> view);
    }

    @TemplateData
    record Op(String id, String kind, String detail, long calls, long errors, String errorCodes, String meanMs) {}

    @Inject
    ConsoleAccess access;

    @Inject
    QueryRegistry queries;

    @Inject
    CommandRegistry commands;

    @Inject
    MeterRegistry registry;

    @GET
    @Operation(hidden = true)
    public Uni<Response> operations(@CookieParam(ConsoleAccess.COOKIE) String cookie) {
        return access.page("GET /console/operations", cookie, s -> {
            Map<String, String[]> ops = new TreeMap<>();
            for (QueryDefinition q : queries.all()) {
                ops.put(q.id(), new String[] {"query", q.access() + " · tables " + q.tables()});
            }
            for (String id : commands.ids()) {
                ops.put(id, new String[] {"command", ""});
            }
            List<Op> out = new ArrayList<>();
            for (Map.Entry<String, String[]> e : ops.entrySet()) {
                out.add(op(e.getKey(), e.getValue()[0], e.getValue()[1]));
            }
            if (registry.find("syncular.operations")
                            .tag("operation", "unregistered")
                            .timer()
                    != null) {
                out.add(op("unregistered", "calls to no registered id", ""));
            }
            return Uni.createFrom()
                    .item(SignInPage.html(
                            200,
                            Templates.operations(ConsoleChrome.of(access, s, "Remote operations"), out)
                                    .render()));
        });
    }

    private Op op(String id, String kind, String detail) {
        long calls = 0;
        long errors = 0;
        double totalMs = 0;
        Map<String, Long> codes = new TreeMap<>();
        for (Timer t : registry.find("syncular.operations").tag("operation", id).timers()) {
            calls += t.count();
            totalMs += t.totalTime(TimeUnit.MILLISECONDS);
            String outcome = t.getId().getTag("outcome");
            if (outcome != null && !"ok".equals(outcome)) {
                errors += t.count();
                codes.merge(outcome, t.count(), Long::sum);
            }
        }
        return new Op(
                id,
                kind,
                detail,
                calls,
                errors,
                codes.isEmpty() ? "" : codes.toString(),
                calls == 0 ? "–" : String.format(java.util.Locale.ROOT, "%.1f", totalMs / calls));
    }
}
