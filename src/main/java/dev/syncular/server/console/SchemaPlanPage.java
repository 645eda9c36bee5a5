package dev.syncular.server.console;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.rollout.SchemaChangePlanner;
import dev.syncular.server.schema.SchemaException;
import dev.syncular.server.storage.ConsoleSession;
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
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Response;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.microprofile.openapi.annotations.Operation;

/**
 * The plan of a schema change (docs/SCHEMA.md "First, the plan"): the new schema document pasted or uploaded (the
 * page's script reads a chosen file into the text area), the days of client records to count and the checkpoints the
 * new build declares; the answer is the same {@link SchemaChangePlanner} plan as {@code POST <mount>/admin/schema/plan},
 * laid out as tables, with its JSON below. Nothing is changed. A document that is no JSON object is shown as the
 * error, with the form kept.
 */
@Path("/console/schema-plan")
@ConsoleRoute
public class SchemaPlanPage {
    /** The form's cap: a document of up to about 1 MiB, urlencoded. */
    static final int MAX_FORM_BYTES = 4 * 1024 * 1024;

    static final String TITLE = "Schema plan";

    @CheckedTemplate
    static class Templates {
        static native TemplateInstance plan(ConsoleChrome chrome, View view);
    }

    /** One planned statement. */
    @TemplateData
    record Statement(String sql, String table, String lock, boolean blocksWrites, long rows, long estimatedMs) {}

    /** One table a backfill fills, per partition. */
    @TemplateData
    record Backfill(String table, String columns, boolean required, String partition, long rows, String checkpoint) {}

    /** The client records of one schema version. */
    @TemplateData
    record Clients(
            int schemaVersion, long clients, long actors, String served, String requiredSchemaVersion, String tables) {}

    /** The page: the form's fields, and the plan when one was asked for. */
    @TemplateData
    record View(
            String document,
            String days,
            String checkpoints,
            String error,
            boolean planned,
            boolean allowed,
            String refusal,
            String versions,
            String action,
            List<Statement> ddl,
            List<Statement> concurrentDdl,
            long writesBlockedMs,
            List<Backfill> backfills,
            String window,
            List<String> excluded,
            List<Clients> clients,
            long refusedClients,
            String serveGate,
            String json) {}

    @Inject
    ConsoleAccess access;

    @Inject
    SchemaChangePlanner planner;

    @GET
    @Operation(hidden = true)
    public Uni<Response> form(@CookieParam(ConsoleAccess.COOKIE) String cookie) {
        return access.page(
                "GET /console/schema-plan", cookie, s -> Uni.createFrom().item(page(s, 200, form("", "30", "", ""))));
    }

    @POST
    @Operation(hidden = true)
    public Uni<Response> plan(@CookieParam(ConsoleAccess.COOKIE) String cookie, @Context HttpServerRequest request) {
        return access.action("POST /console/schema-plan", cookie, request, MAX_FORM_BYTES, (s, form) -> {
            String document = form.get("document");
            String days = form.get("days").trim();
            String checkpoints = form.get("checkpoints");
            List<SchemaChangePlanner.Checkpoint> declared =
                    SchemaChangePlanner.checkpoints(List.of(checkpoints.split("\n")));
            int d = SchemaChangePlanner.days(days);
            JsonNode doc;
            try {
                doc = Json.readTree(document);
            } catch (JsonProcessingException e) {
                return Uni.createFrom()
                        .item(page(s, 400, form(document, days, checkpoints, "The document is not valid JSON.")));
            }
            try {
                return planner.plan(doc, declared, d)
                        .map(plan -> page(s, 200, planned(document, days, checkpoints, plan)));
            } catch (SchemaException e) {
                return Uni.createFrom()
                        .item(page(s, 400, form(document, days, checkpoints, "The document is not a JSON object.")));
            }
        });
    }

    private Response page(ConsoleSession s, int status, View view) {
        return SignInPage.html(
                status, Templates.plan(ConsoleChrome.of(access, s, TITLE), view).render());
    }

    private static View form(String document, String days, String checkpoints, String error) {
        return new View(
                document,
                days,
                checkpoints,
                error,
                false,
                false,
                "",
                "",
                "",
                List.of(),
                List.of(),
                0,
                List.of(),
                "",
                List.of(),
                List.of(),
                0,
                "",
                "");
    }

    private static View planned(String document, String days, String checkpoints, JsonNode plan) {
        JsonNode refusal = plan.path("refusal");
        String refused = refusal.isObject()
                ? refusal.path("code").asText() + ": " + refusal.path("message").asText() + " "
                        + refusal.path("details")
                : "";
        JsonNode storage = plan.path("storage");
        List<Backfill> backfills = new ArrayList<>();
        for (JsonNode b : plan.path("backfills")) {
            List<String> cols = new ArrayList<>();
            b.path("columns").forEach(c -> cols.add(c.asText()));
            for (JsonNode p : b.path("partitions")) {
                backfills.add(new Backfill(
                        b.path("table").asText(),
                        String.join(", ", cols),
                        b.path("required").asBoolean(),
                        p.path("partition").asText(),
                        p.path("rows").asLong(),
                        p.path("checkpoint").isNull()
                                ? "none declared"
                                : p.path("checkpoint").asText()));
            }
        }
        List<String> versions = new ArrayList<>();
        plan.path("window").path("versions").forEach(v -> versions.add(v.asText()));
        List<String> excluded = new ArrayList<>();
        plan.path("window")
                .path("excluded")
                .forEach(x -> excluded.add(x.path("message").asText()));
        List<Clients> clients = new ArrayList<>();
        for (JsonNode c : plan.path("clients").path("versions")) {
            List<String> tables = new ArrayList<>();
            c.path("rebootstrap")
                    .forEach(r -> tables.add(
                            r.path("table").asText() + " (" + r.path("rows").asLong() + " rows, "
                                    + r.path("bytes").asLong() + " bytes, "
                                    + r.path("clients").asLong() + " clients)"));
            clients.add(new Clients(
                    c.path("schemaVersion").asInt(),
                    c.path("clients").asLong(),
                    c.path("actors").asLong(),
                    c.path("served").isNull() ? "unknown" : c.path("served").asBoolean() ? "served" : "refused",
                    c.path("requiredSchemaVersion").isNull()
                            ? ""
                            : c.path("requiredSchemaVersion").asText(),
                    String.join("; ", tables)));
        }
        JsonNode gate = plan.path("serveGate");
        String serveGate = gate.path("migrates").asBoolean()
                ? "The first pod of the new build is unready for about "
                        + gate.path("newPodUnreadyMs").asLong()
                        + " ms while it migrates; pushes wait about "
                        + gate.path("pushesHeldBackMs").asLong()
                        + " ms; every pod of the running build is unready (schema_newer) from the migration's commit"
                        + " until it is replaced."
                        + (gate.path("checkpointPartitions").isEmpty()
                                ? ""
                                : " Partitions " + gate.path("checkpointPartitions")
                                        + " are refused by every process that does not declare their checkpoint"
                                        + " until it is activated.")
                : "No migration: the serve gate stays open.";
        return new View(
                document,
                days,
                checkpoints,
                "",
                true,
                plan.path("allowed").asBoolean(),
                refused,
                "running " + plan.path("runningSchemaVersion").asText() + ", stored "
                        + plan.path("storedSchemaVersion").asText() + ", new "
                        + plan.path("nextSchemaVersion").asText(),
                storage.path("action").asText(),
                statements(storage.path("ddl")),
                statements(storage.path("concurrentDdl")),
                storage.path("writesBlockedMs").asLong(),
                backfills,
                String.join(", ", versions),
                excluded,
                clients,
                plan.path("clients").path("refusedClients").asLong(),
                serveGate,
                plan.toPrettyString());
    }

    private static List<Statement> statements(JsonNode list) {
        List<Statement> out = new ArrayList<>();
        for (JsonNode s : list) {
            out.add(new Statement(
                    s.path("sql").asText(),
                    s.path("table").asText(""),
                    s.path("lock").asText(),
                    s.path("blocksWrites").asBoolean(),
                    s.path("rows").asLong(),
                    s.path("estimatedMs").asLong()));
        }
        return out;
    }
}
