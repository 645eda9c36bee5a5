package dev.syncular.server.console;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.observability.OperationalEvents;
import dev.syncular.server.wire.Json;
import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateData;
import io.quarkus.qute.TemplateInstance;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import jakarta.ws.rs.CookieParam;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.jboss.resteasy.reactive.RestStreamElementType;

/**
 * Live events: this pod's operational event tail (the events of {@code GET <mount>/admin/events}: rejections,
 * conflicts, gate refusals, prunes, reactions, failed operations) streamed to the browser as server-sent events
 * while they happen, filtered by kind and partition. The stream ({@code <mount>/console/events/stream}) is behind
 * the session like every page ({@link EventStreamGate}: 401 without one) and ends when the session expires, is
 * signed out, or its admin token is replaced (looked up again every {@value #RECHECK_POLLS} polls).
 */
@Path("/console/events")
@ConsoleRoute
public class LiveEventsPage {
    /** How often the tail is looked at for new events. */
    static final Duration POLL = Duration.ofMillis(500);
    /** Every how many polls the stream's session is looked up again. */
    static final int RECHECK_POLLS = 4;
    /** What a poll yields once the stream's session is gone (compared by identity). */
    private static final List<OperationalEvents.Event> ENDED = new ArrayList<>();
    /** The events a fresh stream starts with. */
    static final int BACKLOG = 50;

    @CheckedTemplate
    static class Templates {
        static native TemplateInstance events(ConsoleChrome chrome, Filter view);
    }

    @TemplateData
    record Filter(String kind, String partition, List<String> kinds, String streamHref) {}

    @Inject
    ConsoleAccess access;

    @Inject
    OperationalEvents events;

    @GET
    @Operation(hidden = true)
    public Uni<Response> page(
            @CookieParam(ConsoleAccess.COOKIE) String cookie,
            @QueryParam("kind") String kind,
            @QueryParam("partition") String partition) {
        return access.page("GET /console/events", cookie, s -> {
            String k = kind == null ? "" : kind;
            String p = partition == null ? "" : partition;
            Filter view = new Filter(
                    k,
                    p,
                    List.of(
                            OperationalEvents.REJECTION,
                            OperationalEvents.CONFLICT,
                            OperationalEvents.GATE_REFUSAL,
                            OperationalEvents.PRUNE,
                            OperationalEvents.OPERATION_FAILED,
                            "reaction.dead_lettered",
                            "reaction.retried"),
                    access.base() + "/events/stream?kind=" + Links.q(k) + "&partition=" + Links.q(p));
            return Uni.createFrom()
                    .item(SignInPage.html(
                            200,
                            Templates.events(ConsoleChrome.of(access, s, "Live events"), view)
                                    .render()));
        });
    }

    @GET
    @Path("/stream")
    @Produces(MediaType.SERVER_SENT_EVENTS)
    @RestStreamElementType(MediaType.APPLICATION_JSON)
    @Operation(hidden = true)
    public Multi<String> stream(
            @CookieParam(ConsoleAccess.COOKIE) String cookie,
            @QueryParam("kind") String kind,
            @QueryParam("partition") String partition) {
        String k = kind == null ? "" : kind;
        String p = partition == null ? "" : partition;
        AtomicLong seen = new AtomicLong(-1);
        return access.session(cookie)
                .toMulti()
                .flatMap(s -> {
                    long lifetime = Math.max(0, s.expiresAtMs() - System.currentTimeMillis());
                    return Multi.createFrom()
                            .ticks()
                            .startingAfter(Duration.ofMillis(1))
                            .every(POLL)
                            // the session is looked up again every few polls: signed out, or its admin token
                            // replaced (issue 45), the stream ends
                            .onItem()
                            .transformToUniAndConcatenate(tick -> tick % RECHECK_POLLS == RECHECK_POLLS - 1
                                    ? access.session(cookie).map(live -> live == null ? ENDED : fresh(seen, k, p))
                                    : Uni.createFrom().item(fresh(seen, k, p)))
                            .select()
                            .first(batch -> batch != ENDED)
                            .onItem()
                            .<OperationalEvents.Event>disjoint()
                            .select()
                            .first(Duration.ofMillis(lifetime));
                })
                .map(e -> {
                    ObjectNode o = Json.object()
                            .put("seq", e.seq())
                            .put("atMs", e.atMs())
                            .put("kind", e.kind())
                            .put("code", e.code())
                            .put("partition", e.partition());
                    o.set("details", Json.valueToTree(e.details()));
                    return o.toString();
                });
    }

    /** The events after the last one sent that pass the filter, oldest first (the backlog on the first call). */
    private List<OperationalEvents.Event> fresh(AtomicLong seen, String kind, String partition) {
        List<OperationalEvents.Event> tail = events.tail(seen.get() < 0 ? BACKLOG : events.capacity());
        List<OperationalEvents.Event> out = new ArrayList<>();
        long last = seen.get();
        for (OperationalEvents.Event e : tail) {
            if (e.seq() <= last) {
                break;
            }
            if ((kind.isEmpty() || kind.equals(e.kind())) && (partition.isEmpty() || partition.equals(e.partition()))) {
                out.add(e);
            }
        }
        if (!tail.isEmpty()) {
            seen.set(Math.max(last, tail.get(0).seq()));
        } else if (last < 0) {
            seen.set(0);
        }
        Collections.reverse(out);
        return out;
    }
}
