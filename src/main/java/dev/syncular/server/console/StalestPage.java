package dev.syncular.server.console;

import dev.syncular.server.realtime.Staleness;
import dev.syncular.server.realtime.Stalest;
import dev.syncular.server.realtime.StalestClients;
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
import org.eclipse.microprofile.openapi.annotations.Operation;

/**
 * Stalest clients — who waits for commits right now on the pod that answers: its connected clients and partitions
 * behind by the most (the age of the oldest commit each is owed), with the part of the path that holds them — the
 * fan-out backlog, a socket that does not drain (backpressure), or a wake-up waiting for the client's pull — and how
 * many are behind by more than the objective ({@link StalestClients}). Each partition links to its partition page.
 */
@Path("/console/stalest")
@ConsoleRoute
public class StalestPage {
    @CheckedTemplate
    static class Templates {
        static native TemplateInstance stalest(ConsoleChrome chrome, Board view);
    }

    @TemplateData
    record Client(
            int rank, String partition, String href, String clientId, String actorId, long lagMs, String reason) {}

    @TemplateData
    record Partition(int rank, String partition, String href, long lagMs, String reason, int clientsBehind) {}

    @TemplateData
    record Reason(String reason, int clients) {}

    @TemplateData
    record Board(
            List<Client> clients,
            List<Partition> partitions,
            List<Reason> overObjective,
            long objectiveMs,
            int connections,
            int count,
            String podId) {}

    @Inject
    ConsoleAccess access;

    @Inject
    StalestClients stalest;

    @GET
    @Operation(hidden = true)
    public Uni<Response> stalest(@CookieParam(ConsoleAccess.COOKIE) String cookie) {
        return access.page("GET /console/stalest", cookie, s -> {
            Stalest now = stalest.now();
            List<Client> clients = new ArrayList<>();
            for (Stalest.StaleClient c : now.clients()) {
                clients.add(new Client(
                        clients.size() + 1,
                        c.partition(),
                        href(c.partition()),
                        c.clientId(),
                        c.actorId(),
                        c.lagMs(),
                        c.reason().wire));
            }
            List<Partition> partitions = new ArrayList<>();
            for (Stalest.StalePartition p : now.partitions()) {
                partitions.add(new Partition(
                        partitions.size() + 1,
                        p.partition(),
                        href(p.partition()),
                        p.lagMs(),
                        p.reason().wire,
                        p.clientsBehind()));
            }
            List<Reason> over = new ArrayList<>();
            for (Staleness r : Staleness.values()) {
                over.add(new Reason(r.wire, now.overObjective().getOrDefault(r, 0)));
            }
            Board view = new Board(
                    clients,
                    partitions,
                    over,
                    stalest.objectiveMs(),
                    now.connections(),
                    stalest.count(),
                    stalest.podId());
            return Uni.createFrom()
                    .item(SignInPage.html(
                            200,
                            Templates.stalest(ConsoleChrome.of(access, s, "Stalest clients"), view)
                                    .render()));
        });
    }

    private String href(String partition) {
        return access.base() + "/partition?id=" + Links.q(partition);
    }
}
