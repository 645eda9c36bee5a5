package dev.syncular.server.console;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.http.AdminAccess;
import dev.syncular.server.jobs.PruningJob;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.wire.Json;
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
import java.io.IOException;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;

/**
 * Partitions: the registry paged by id and searched by id prefix (§2.1: log epoch, newest commit, §4.6 horizon);
 * one partition's rows per table and client records (§4.5 cursor with its lag behind the newest commit drawn as a
 * bar, last seen, wire version, §8.1 registered subscriptions); the §2.1 log-epoch rotation of a partition and a
 * pruning pass (§4.6), each behind a confirmation. The same storage calls as the admin routes
 * ({@code GET <mount>/admin/partitions...}).
 */
@Path("/console")
@ConsoleRoute
public class PartitionsPage {
    static final int PAGE = 50;

    @CheckedTemplate
    static class Templates {
        static native TemplateInstance partitions(ConsoleChrome chrome, Listing view);

        static native TemplateInstance partition(ConsoleChrome chrome, Detail view);
    }

    @TemplateData
    record Row(String partition, String href, String logEpoch, long maxCommitSeq, long horizonSeq, String lastSeen) {}

    @TemplateData
    record Listing(String q, List<Row> partitions, String nextHref, String notice) {}

    /** A client record with its cursor lag: {@code lagPercent} of the partition's commits (the bar's width). */
    @TemplateData
    record Client(
            String clientId,
            String actorId,
            long cursor,
            long lag,
            int lagPercent,
            String lastSeen,
            String wireVersion,
            String subscriptions) {}

    @TemplateData
    record TableCount(String table, long rows) {}

    @TemplateData
    record Detail(
            String partition,
            String q,
            String logEpoch,
            long maxCommitSeq,
            long horizonSeq,
            String created,
            String lastSeen,
            List<TableCount> rowCounts,
            List<Client> clients,
            String notice) {}

    @Inject
    ConsoleAccess access;

    @Inject
    SyncStorage storage;

    @Inject
    PruningJob pruning;

    @GET
    @Path("/partitions")
    @Operation(hidden = true)
    public Uni<Response> list(
            @CookieParam(ConsoleAccess.COOKIE) String cookie,
            @QueryParam("q") String q,
            @QueryParam("after") String after,
            @QueryParam("notice") String notice) {
        return access.page("GET /console/partitions", cookie, s -> {
            String prefix = AdminAccess.storable(q == null ? "" : q.trim());
            String from = AdminAccess.storable(after == null || after.isEmpty() ? null : after);
            Uni<List<PartitionState>> page;
            if (from == null && !prefix.isEmpty()) {
                // ids >= prefix, in order: the prefix itself (when registered), then those after it
                page = storage.readPartition(prefix)
                        .flatMap(exact -> storage.listPartitions(prefix, PAGE + 1)
                                .map(rest -> {
                                    List<PartitionState> all = new ArrayList<>();
                                    if (exact != null) {
                                        all.add(exact);
                                    }
                                    all.addAll(rest);
                                    return all;
                                }));
            } else {
                page = storage.listPartitions(from, PAGE + 1);
            }
            return page.map(found -> {
                List<Row> rows = new ArrayList<>();
                String next = "";
                for (PartitionState p : found) {
                    if (!prefix.isEmpty() && !p.partition().startsWith(prefix)) {
                        break;
                    }
                    if (rows.size() == PAGE) {
                        PartitionState lastShown = found.get(PAGE - 1);
                        next = access.base() + "/partitions?q=" + Links.q(prefix) + "&after="
                                + Links.q(lastShown.partition());
                        break;
                    }
                    rows.add(new Row(
                            p.partition(),
                            access.base() + "/partition?id=" + Links.q(p.partition()),
                            p.logEpoch(),
                            p.maxCommitSeq(),
                            p.horizonSeq(),
                            time(p.lastSeenAtMs())));
                }
                return SignInPage.html(
                        200,
                        Templates.partitions(
                                        ConsoleChrome.of(access, s, "Partitions"),
                                        new Listing(prefix, rows, next, notice == null ? "" : notice))
                                .render());
            });
        });
    }

    @GET
    @Path("/partition")
    @Operation(hidden = true)
    public Uni<Response> partition(
            @CookieParam(ConsoleAccess.COOKIE) String cookie,
            @QueryParam("id") String id,
            @QueryParam("notice") String notice) {
        return access.page("GET /console/partition", cookie, s -> {
            String partition = required(id);
            return storage.readPartition(partition).flatMap(state -> {
                if (state == null) {
                    return Uni.createFrom()
                            .item(Response.seeOther(URI.create(access.base() + "/partitions?notice="
                                            + Links.q("partition not found: " + partition)))
                                    .build());
                }
                return storage.countRows(partition)
                        .flatMap(counts -> storage.listClients(partition).map(clients -> {
                            List<TableCount> tables = new ArrayList<>();
                            counts.forEach((t, n) -> tables.add(new TableCount(t, n)));
                            List<Client> rows = new ArrayList<>();
                            for (ClientRecord c : clients) {
                                rows.add(client(state, c));
                            }
                            Detail view = new Detail(
                                    partition,
                                    Links.q(partition),
                                    state.logEpoch(),
                                    state.maxCommitSeq(),
                                    state.horizonSeq(),
                                    time(state.createdAtMs()),
                                    time(state.lastSeenAtMs()),
                                    tables,
                                    rows,
                                    notice == null ? "" : notice);
                            return SignInPage.html(
                                    200,
                                    Templates.partition(ConsoleChrome.of(access, s, "Partitions"), view)
                                            .render());
                        }));
            });
        });
    }

    @GET
    @Path("/partition/rotate-epoch")
    @Operation(hidden = true)
    public Uni<Response> confirmRotate(@CookieParam(ConsoleAccess.COOKIE) String cookie, @QueryParam("id") String id) {
        return access.page("GET /console/partition/rotate-epoch", cookie, s -> {
            String partition = required(id);
            Confirmation c = new Confirmation(
                    "Rotate the log epoch of " + partition + "?",
                    "For a partition restored from a backup (§2.1): a new log epoch, its client cursor records"
                            + " deleted, reset-required sent to its realtime sessions on every pod. Every client"
                            + " of the partition bootstraps again on its next request.",
                    "",
                    access.base() + "/partition/rotate-epoch",
                    List.of(new Confirmation.Field("partition", partition)),
                    "Rotate the epoch",
                    access.base() + "/partition?id=" + Links.q(partition));
            return Uni.createFrom().item(SignInPage.html(200, c.render(ConsoleChrome.of(access, s, "Partitions"))));
        });
    }

    @POST
    @Path("/partition/rotate-epoch")
    @Operation(hidden = true)
    public Uni<Response> rotate(@CookieParam(ConsoleAccess.COOKIE) String cookie, @Context HttpServerRequest request) {
        return access.action("POST /console/partition/rotate-epoch", cookie, request, (s, form) -> {
            String partition = required(form.get("partition"));
            return storage.readPartition(partition).flatMap(before -> {
                if (before == null) {
                    return Uni.createFrom()
                            .item(ConsoleAccess.error(
                                    404,
                                    dev.syncular.server.errors.ErrorCode.NOT_FOUND,
                                    "partition not found",
                                    java.util.Map.of("partition", partition)));
                }
                return storage.rotateLogEpoch(partition)
                        .map(after -> Response.seeOther(URI.create(access.base() + "/partition?id="
                                        + Links.q(partition) + "&notice="
                                        + Links.q(
                                                "log epoch rotated: " + before.logEpoch() + " → " + after.logEpoch())))
                                .build());
            });
        });
    }

    @GET
    @Path("/prune")
    @Operation(hidden = true)
    public Uni<Response> confirmPrune(@CookieParam(ConsoleAccess.COOKIE) String cookie) {
        return access.page("GET /console/prune", cookie, s -> {
            Confirmation c = new Confirmation(
                    "Run a pruning pass now?",
                    "Prunes every partition under the configured retention policy (§4.6): commits below each"
                            + " partition's new horizon are deleted; a client whose cursor falls below it"
                            + " bootstraps again.",
                    "",
                    access.base() + "/prune",
                    List.of(),
                    "Prune now",
                    access.base() + "/partitions");
            return Uni.createFrom().item(SignInPage.html(200, c.render(ConsoleChrome.of(access, s, "Partitions"))));
        });
    }

    @POST
    @Path("/prune")
    @Operation(hidden = true)
    public Uni<Response> prune(@CookieParam(ConsoleAccess.COOKIE) String cookie, @Context HttpServerRequest request) {
        return access.action(
                "POST /console/prune",
                cookie,
                request,
                (s, form) -> pruning.pruneNow()
                        .map(pass -> Response.seeOther(URI.create(access.base() + "/partitions?notice="
                                        + Links.q("pruned " + pass.removedCommits() + " commits; horizon lag "
                                                + pass.horizonLagCommits())))
                                .build()));
    }

    private static Client client(PartitionState state, ClientRecord c) {
        long cursor = c.cursor();
        long lag = Math.max(0, state.maxCommitSeq() - Math.max(cursor, 0));
        int percent =
                state.maxCommitSeq() <= 0 ? 0 : (int) Math.min(100, Math.round(100.0 * lag / state.maxCommitSeq()));
        return new Client(
                c.clientId(),
                c.actorId(),
                cursor,
                lag,
                percent,
                time(c.updatedAtMs()),
                c.wireVersion() == null ? "–" : String.valueOf(c.wireVersion()),
                subscriptions(c.subscriptionsJson()));
    }

    /** The registered subscriptions (§8.1), one line each: id, table and requested scopes. */
    private static String subscriptions(String json) {
        if (json == null) {
            return "";
        }
        try {
            JsonNode doc = Json.readTree(json);
            List<String> out = new ArrayList<>();
            for (JsonNode sub : doc) {
                out.add(sub.path("id").asText() + " → " + sub.path("table").asText() + " "
                        + sub.path("scopes").toString());
            }
            return String.join("; ", out);
        } catch (IOException e) {
            return "(unreadable)";
        }
    }

    static String required(String id) {
        if (id == null || id.isEmpty()) {
            throw new IllegalArgumentException("identifier required");
        }
        return AdminAccess.storable(id);
    }

    static String time(long ms) {
        return ms <= 0 ? "–" : Instant.ofEpochMilli(ms).toString();
    }
}
