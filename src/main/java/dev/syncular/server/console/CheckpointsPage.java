package dev.syncular.server.console;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.http.AdminAccess;
import dev.syncular.server.jobs.Backfills;
import dev.syncular.server.storage.CheckpointState;
import dev.syncular.server.storage.CheckpointStorage;
import dev.syncular.server.storage.ConsoleSession;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoredCheckpoint;
import dev.syncular.server.sync.SyncEngine;
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
 * Backfill checkpoints (§2.4): the pending ones at the running schema version across partitions (each holding the
 * serve gate shut, and readiness DOWN on every pod that does not declare it), a partition's checkpoints in every
 * state, declaring one — behind a confirmation that warns when no running build declares it, since that takes
 * every pod's readiness down — and activating a pending one: a declared checkpoint is claimed first (a fresh
 * owner epoch), then activated at its watermark against the source tables the operator names ({@code stale} when
 * one changed above it), or abandoning a pending one (behind a confirmation) so the gate stops waiting for it.
 * The same {@link Backfills} calls as {@code <mount>/admin/checkpoints}.
 */
@Path("/console/checkpoints")
@ConsoleRoute
public class CheckpointsPage {
    @CheckedTemplate
    static class Templates {
        static native TemplateInstance checkpoints(ConsoleChrome chrome, Listing view);
    }

    @TemplateData
    record Checkpoint(
            String partition,
            String name,
            int schemaVersion,
            String state,
            long watermark,
            long ownerEpoch,
            long observedRows,
            String updated,
            boolean declaredHere,
            boolean pending) {}

    @TemplateData
    record Listing(
            int runningSchemaVersion,
            List<Checkpoint> pending,
            String partition,
            List<Checkpoint> ofPartition,
            String tables,
            String notice) {}

    @Inject
    ConsoleAccess access;

    @Inject
    Backfills backfills;

    @Inject
    CheckpointStorage checkpoints;

    @Inject
    SyncEngine engine;

    @Inject
    dev.syncular.server.schema.SchemaWindow window;

    @GET
    @Operation(hidden = true)
    public Uni<Response> list(
            @CookieParam(ConsoleAccess.COOKIE) String cookie,
            @QueryParam("partition") String partition,
            @QueryParam("notice") String notice) {
        return access.page("GET /console/checkpoints", cookie, s -> {
            int running = engine.gates().runningSchemaVersion();
            String p = AdminAccess.storable(partition == null ? "" : partition.trim());
            Uni<List<StoredCheckpoint>> of = p.isEmpty() ? Uni.createFrom().item(List.of()) : backfills.list(p);
            return checkpoints
                    .readPendingCheckpoints(running)
                    .flatMap(pending -> of.map(list -> {
                        Listing view = new Listing(
                                running,
                                render(pending),
                                p,
                                render(list),
                                String.join(
                                        ",",
                                        window.current().tables().stream()
                                                .map(t -> t.name())
                                                .toList()),
                                notice == null ? "" : notice);
                        return SignInPage.html(
                                200,
                                Templates.checkpoints(ConsoleChrome.of(access, s, "Checkpoints"), view)
                                        .render());
                    }));
        });
    }

    @GET
    @Path("/declare")
    @Operation(hidden = true)
    public Uni<Response> confirmDeclare(
            @CookieParam(ConsoleAccess.COOKIE) String cookie,
            @QueryParam("partition") String partition,
            @QueryParam("name") String name,
            @QueryParam("schemaVersion") String schemaVersion) {
        return access.page("GET /console/checkpoints/declare", cookie, s -> {
            String p = PartitionsPage.required(partition == null ? null : partition.trim());
            String n = PartitionsPage.required(name == null ? null : name.trim());
            int version = version(schemaVersion);
            boolean carried = engine.gates().declaredHere(p, n);
            boolean gating = version == engine.gates().runningSchemaVersion();
            String warning = !carried && gating
                    ? "No running build declares this checkpoint (syncular.checkpoints): once declared it holds"
                            + " the serve gate of " + p + " shut and takes every pod's readiness DOWN"
                            + " (sync.schema_not_ready) until it is activated."
                    : "";
            return Uni.createFrom()
                    .item(confirmation(
                            s,
                            "Declare",
                            p,
                            n,
                            version,
                            "A declared backfill checkpoint (§2.4) must be claimed, backfilled and activated before the"
                                    + " partition serves the schema version again.",
                            warning));
        });
    }

    @POST
    @Path("/declare")
    @Operation(hidden = true)
    public Uni<Response> declare(@CookieParam(ConsoleAccess.COOKIE) String cookie, @Context HttpServerRequest request) {
        return access.action("POST /console/checkpoints/declare", cookie, request, (s, form) -> {
            String p = PartitionsPage.required(form.get("partition"));
            String n = PartitionsPage.required(form.get("name"));
            int version = version(form.get("schemaVersion"));
            return backfills.declare(p, n, version).map(c -> back(p, "declared " + n + " (" + c.state().dbName + ")"));
        });
    }

    @GET
    @Path("/abandon")
    @Operation(hidden = true)
    public Uni<Response> confirmAbandon(
            @CookieParam(ConsoleAccess.COOKIE) String cookie,
            @QueryParam("partition") String partition,
            @QueryParam("name") String name,
            @QueryParam("schemaVersion") String schemaVersion) {
        return access.page("GET /console/checkpoints/abandon", cookie, s -> {
            String p = PartitionsPage.required(partition == null ? null : partition.trim());
            String n = PartitionsPage.required(name == null ? null : name.trim());
            int version = version(schemaVersion);
            String warning = engine.gates().declaredHere(p, n)
                    ? "This build declares the checkpoint (syncular.checkpoints): a pod of it that starts again"
                            + " declares it again."
                    : "";
            return Uni.createFrom()
                    .item(confirmation(
                            s,
                            "Abandon",
                            p,
                            n,
                            version,
                            "The declaration is removed and the serve gate stops waiting for it; a backfill still"
                                    + " running on it stops at its next step. Writer fences the declaration raised"
                                    + " stay raised.",
                            warning));
        });
    }

    /** {@link Backfills#abandon}: a declared or backfilling checkpoint removed; an activated one stays. */
    @POST
    @Path("/abandon")
    @Operation(hidden = true)
    public Uni<Response> abandon(@CookieParam(ConsoleAccess.COOKIE) String cookie, @Context HttpServerRequest request) {
        return access.action("POST /console/checkpoints/abandon", cookie, request, (s, form) -> {
            String p = PartitionsPage.required(form.get("partition"));
            String n = PartitionsPage.required(form.get("name"));
            int version = version(form.get("schemaVersion"));
            return backfills
                    .abandon(p, n, version)
                    .map(c -> back(p, "abandoned " + n))
                    .onFailure(e -> e instanceof StorageException se
                            && (StorageException.CHECKPOINT_ACTIVATED.equals(se.code())
                                    || StorageException.CHECKPOINT_NOT_FOUND.equals(se.code())))
                    .recoverWithItem(e -> back(
                            p,
                            StorageException.CHECKPOINT_ACTIVATED.equals(((StorageException) e).code())
                                    ? n + " is already active: it stays"
                                    : n + " is not declared"));
        });
    }

    @POST
    @Path("/activate")
    @Operation(hidden = true)
    public Uni<Response> activate(
            @CookieParam(ConsoleAccess.COOKIE) String cookie, @Context HttpServerRequest request) {
        return access.action("POST /console/checkpoints/activate", cookie, request, (s, form) -> {
            String p = PartitionsPage.required(form.get("partition"));
            String n = PartitionsPage.required(form.get("name"));
            List<String> sources = new ArrayList<>();
            for (String t : form.get("sourceTables").split(",")) {
                if (!t.isBlank()) {
                    sources.add(AdminAccess.storable(t.trim()));
                }
            }
            return backfills.list(p).flatMap(list -> {
                StoredCheckpoint c = list.stream()
                        .filter(x -> x.name().equals(n))
                        .findFirst()
                        .orElse(null);
                if (c == null) {
                    return Uni.createFrom()
                            .item(ConsoleAccess.error(
                                    404,
                                    ErrorCode.NOT_FOUND,
                                    "checkpoint not found",
                                    Map.of("partition", p, "name", n)));
                }
                if (c.state() == CheckpointState.ACTIVATED) {
                    return Uni.createFrom().item(back(p, n + " is already active"));
                }
                Uni<StoredCheckpoint> owned = c.state() == CheckpointState.DECLARED
                        ? backfills.claim(p, n, c.schemaVersion())
                        : Uni.createFrom().item(c);
                return owned.flatMap(o -> backfills.activate(p, n, o.ownerEpoch(), o.watermark(), sources))
                        .map(r -> back(p, "activation of " + n + ": " + r.name().toLowerCase(java.util.Locale.ROOT)))
                        .onFailure(e -> e instanceof StorageException se
                                && StorageException.CHECKPOINT_OWNER_CHANGED.equals(se.code()))
                        .recoverWithItem(e -> back(p, "activation of " + n + ": claimed by another owner meanwhile"));
            });
        });
    }

    /** The confirmation page of {@code verb} ("Declare", "Abandon") on checkpoint {@code name} of {@code partition}. */
    private Response confirmation(
            ConsoleSession s, String verb, String partition, String name, int version, String message, String warning) {
        Confirmation c = new Confirmation(
                verb + " checkpoint " + name + " on " + partition + " at schema version " + version + "?",
                message,
                warning,
                access.base() + "/checkpoints/" + verb.toLowerCase(java.util.Locale.ROOT),
                List.of(
                        new Confirmation.Field("partition", partition),
                        new Confirmation.Field("name", name),
                        new Confirmation.Field("schemaVersion", String.valueOf(version))),
                verb,
                access.base() + "/checkpoints?partition=" + Links.q(partition));
        return SignInPage.html(200, c.render(ConsoleChrome.of(access, s, "Checkpoints")));
    }

    private Response back(String partition, String notice) {
        return Response.seeOther(URI.create(
                        access.base() + "/checkpoints?partition=" + Links.q(partition) + "&notice=" + Links.q(notice)))
                .build();
    }

    private List<Checkpoint> render(List<StoredCheckpoint> list) {
        int running = engine.gates().runningSchemaVersion();
        List<Checkpoint> out = new ArrayList<>();
        for (StoredCheckpoint c : list) {
            out.add(new Checkpoint(
                    c.partition(),
                    c.name(),
                    c.schemaVersion(),
                    c.state().dbName,
                    c.watermark(),
                    c.ownerEpoch(),
                    c.observedRows(),
                    PartitionsPage.time(c.updatedAtMs()),
                    engine.gates().declaredHere(c.partition(), c.name()),
                    c.state() != CheckpointState.ACTIVATED && c.schemaVersion() == running));
        }
        return out;
    }

    private int version(String raw) {
        if (raw == null || raw.isBlank()) {
            return engine.gates().runningSchemaVersion();
        }
        try {
            int v = Integer.parseInt(raw.trim());
            if (v < 1) {
                throw new IllegalArgumentException("schemaVersion");
            }
            return v;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("schemaVersion", e);
        }
    }
}
