package dev.syncular.server.console;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.http.AdminAccess;
import dev.syncular.server.policy.ReactionDelivery;
import dev.syncular.server.storage.Reaction;
import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateData;
import io.quarkus.qute.TemplateInstance;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.HttpServerRequest;
import jakarta.inject.Inject;
import jakarta.ws.rs.CookieParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.openapi.annotations.Operation;

/**
 * Durable reactions (§6.9) by status, of one partition or all: attempts, due time, a dead letter's error code
 * and details; a dead-lettered one goes back in the queue (attempts and failure cleared, due now) with "Retry".
 * The same store calls as {@code <mount>/admin/reactions}.
 */
@Path("/console/reactions")
@ConsoleRoute
public class ReactionsPage {
    static final int PAGE = 100;
    static final List<String> STATUSES =
            List.of(Reaction.DEAD_LETTER, Reaction.PENDING, Reaction.LEASED, Reaction.COMPLETED);

    @CheckedTemplate
    static class Templates {
        static native TemplateInstance reactions(ConsoleChrome chrome, Listing view);
    }

    @TemplateData
    record Tab(String status, String href, boolean current) {}

    @TemplateData
    record Item(
            long id,
            String partition,
            String type,
            String key,
            String status,
            int attempts,
            int maxAttempts,
            String due,
            String error,
            String errorDetails,
            boolean deadLetter) {}

    @TemplateData
    record Listing(
            String status, String partition, List<Tab> tabs, List<Item> reactions, String nextHref, String notice) {}

    @Inject
    ConsoleAccess access;

    @Inject
    ReactionDelivery delivery;

    @GET
    @Operation(hidden = true)
    public Uni<Response> list(
            @CookieParam(ConsoleAccess.COOKIE) String cookie,
            @QueryParam("status") String status,
            @QueryParam("partition") String partition,
            @QueryParam("after") String after,
            @QueryParam("notice") String notice) {
        return access.page("GET /console/reactions", cookie, s -> {
            String st = status == null || status.isEmpty() ? Reaction.DEAD_LETTER : status;
            if (!STATUSES.contains(st)) {
                throw new IllegalArgumentException("status");
            }
            String p = AdminAccess.storable(partition == null || partition.isBlank() ? null : partition.trim());
            long afterId = after == null || after.isBlank() ? 0 : Long.parseLong(after.trim());
            String pq = p == null ? "" : "&partition=" + Links.q(p);
            return delivery.store().list(p, st, afterId, PAGE + 1).map(rows -> {
                List<Tab> tabs = new ArrayList<>();
                for (String x : STATUSES) {
                    tabs.add(new Tab(x, access.base() + "/reactions?status=" + x + pq, x.equals(st)));
                }
                List<Item> items = new ArrayList<>();
                String next = "";
                for (Reaction r : rows) {
                    if (items.size() == PAGE) {
                        next = access.base() + "/reactions?status=" + st + pq + "&after="
                                + items.get(PAGE - 1).id();
                        break;
                    }
                    items.add(new Item(
                            r.id(),
                            r.partition(),
                            r.type() + " v" + r.version(),
                            r.key(),
                            r.status(),
                            r.attempts(),
                            r.maxAttempts(),
                            PartitionsPage.time(r.dueAtMs()),
                            r.lastErrorCode() == null ? "" : r.lastErrorCode(),
                            r.lastErrorDetailsJson() == null ? "" : r.lastErrorDetailsJson(),
                            Reaction.DEAD_LETTER.equals(r.status())));
                }
                Listing view = new Listing(st, p == null ? "" : p, tabs, items, next, notice == null ? "" : notice);
                return SignInPage.html(
                        200,
                        Templates.reactions(ConsoleChrome.of(access, s, "Reactions"), view)
                                .render());
            });
        });
    }

    @POST
    @Path("/retry")
    @Operation(hidden = true)
    public Uni<Response> retry(@CookieParam(ConsoleAccess.COOKIE) String cookie, @Context HttpServerRequest request) {
        return access.action("POST /console/reactions/retry", cookie, request, (s, form) -> {
            long id;
            try {
                id = Long.parseLong(form.get("id"));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("id", e);
            }
            return delivery.store()
                    .retryDeadLetter(id, System.currentTimeMillis())
                    .flatMap(reset -> delivery.store().find(id).map(r -> {
                        if (r == null) {
                            return ConsoleAccess.error(
                                    404, ErrorCode.NOT_FOUND, "reaction not found", Map.of("id", id));
                        }
                        String notice = reset
                                ? "reaction " + id + " is pending again"
                                : "reaction " + id + " is not dead-lettered (" + r.status() + ")";
                        return Response.seeOther(URI.create(access.base() + "/reactions?status=" + Reaction.DEAD_LETTER
                                        + "&notice=" + Links.q(notice)))
                                .build();
                    }));
        });
    }
}
