package dev.syncular.server.console;

import dev.syncular.server.jobs.TenantLoadJob;
import dev.syncular.server.jobs.TenantLoadJob.Figure;
import dev.syncular.server.storage.TenantLoadRow;
import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateData;
import io.quarkus.qute.TemplateInstance;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import jakarta.ws.rs.CookieParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.eclipse.microprofile.openapi.annotations.Operation;

/**
 * Tenants — who is loud right now: the top partitions of the last minute by database time, committed bytes,
 * fan-out bytes or refusals, each figure summed over the pods heard from recently (every pod publishes its own top
 * partitions to the shared storage, {@link TenantLoadJob}), with the refusals each received by reason. Each partition
 * links to its partition page.
 */
@Path("/console/tenants")
@ConsoleRoute
public class TenantsPage {
    @CheckedTemplate
    static class Templates {
        static native TemplateInstance tenants(ConsoleChrome chrome, Board view);
    }

    /** One partition's merged figures, formatted. */
    @TemplateData
    record Tenant(
            int rank,
            String partition,
            String href,
            String databaseMs,
            long committedBytes,
            long fanoutBytes,
            long refusals,
            List<Refusal> byReason,
            int pods) {}

    @TemplateData
    record Refusal(String reason, long count) {}

    /** A column the table can be ordered by, with its link and whether it orders the table now. */
    @TemplateData
    record Order(String param, String label, String href, boolean current) {}

    @TemplateData
    record Board(List<Tenant> tenants, List<Order> orders, String by, int topN, String podId) {}

    @Inject
    ConsoleAccess access;

    @Inject
    TenantLoadJob tenants;

    @GET
    @Operation(hidden = true)
    public Uni<Response> tenants(@CookieParam(ConsoleAccess.COOKIE) String cookie, @QueryParam("by") String by) {
        Figure figure = Figure.of(by);
        return access.page(
                "GET /console/tenants",
                cookie,
                s -> tenants.board(figure).map(rows -> {
                    List<Tenant> list = new ArrayList<>();
                    for (TenantLoadRow r : rows) {
                        List<Refusal> byReason = new ArrayList<>();
                        new TreeMap<>(r.refusals()).forEach((reason, n) -> byReason.add(new Refusal(reason, n)));
                        list.add(new Tenant(
                                list.size() + 1,
                                r.partition(),
                                access.base() + "/partition?id=" + Links.q(r.partition()),
                                String.format(Locale.ROOT, "%.1f", r.databaseNanos() / 1e6),
                                r.committedBytes(),
                                r.fanoutBytes(),
                                r.refusalCount(),
                                byReason,
                                r.pods()));
                    }
                    List<Order> orders = new ArrayList<>();
                    Map<Figure, String> labels = Map.of(
                            Figure.DATABASE, "Database time",
                            Figure.COMMITTED, "Committed bytes",
                            Figure.FANOUT, "Fan-out bytes",
                            Figure.REFUSALS, "Refusals");
                    for (Figure f : Figure.values()) {
                        orders.add(new Order(
                                f.param,
                                labels.get(f),
                                access.base() + "/tenants?by=" + Links.q(f.param),
                                f == figure));
                    }
                    Board view = new Board(list, orders, figure.param, tenants.topN(), tenants.podId());
                    return SignInPage.html(
                            200,
                            Templates.tenants(ConsoleChrome.of(access, s, "Tenants"), view)
                                    .render());
                }));
    }
}
