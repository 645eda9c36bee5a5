package dev.syncular.server.console;

import dev.syncular.server.http.AdminAccess;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.storage.CommitQuery;
import dev.syncular.server.storage.CommitWindow;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.StoredChange;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.sync.RowCoverage;
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
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.eclipse.microprofile.openapi.annotations.Operation;

/**
 * The row inspector: table + row id of a partition → the stored row (§2.2: values, server version, column
 * versions, stored scopes §3.1), the newest commits that touched it (from the log above the horizon, §4.5), and
 * for each registered client whether its subscriptions reach the row through its effective scopes (§3.2) — and
 * for the others the scope that did not match. The coverage is {@link RowCoverage}'s, as in the admin route
 * {@code GET <mount>/admin/partitions/{p}/tables/{t}/rows/{id}}.
 */
@Path("/console/rows")
@ConsoleRoute
public class RowInspectorPage {
    /** How far back the log is read for the commits that touched the row. */
    static final int COMMIT_WINDOW = 1000;

    @CheckedTemplate
    static class Templates {
        static native TemplateInstance rows(ConsoleChrome chrome, Inspection view);
    }

    @TemplateData
    record Column(String name, String value, long version) {}

    @TemplateData
    record Touch(long commitSeq, String at, String actorId, String clientId, String op, String rowVersion) {}

    @TemplateData
    record Covering(String clientId, String actorId, String basis, String subscriptions) {}

    @TemplateData
    record NotCovering(String clientId, String actorId, String why) {}

    @TemplateData
    record Inspection(
            String partition,
            String table,
            String rowId,
            List<String> tables,
            boolean asked,
            String problem,
            long serverVersion,
            String scopes,
            List<Column> columns,
            List<Touch> commits,
            List<Covering> covering,
            List<NotCovering> notCovering) {

        static Inspection form(
                String partition, String table, String rowId, List<String> tables, boolean asked, String problem) {
            return new Inspection(
                    partition, table, rowId, tables, asked, problem, 0, "", List.of(), List.of(), List.of(), List.of());
        }
    }

    @Inject
    ConsoleAccess access;

    @Inject
    SyncStorage storage;

    @Inject
    SchemaWindow window;

    @GET
    @Operation(hidden = true)
    public Uni<Response> inspect(
            @CookieParam(ConsoleAccess.COOKIE) String cookie,
            @QueryParam("partition") String partition,
            @QueryParam("table") String table,
            @QueryParam("rowId") String rowId) {
        return access.page("GET /console/rows", cookie, s -> {
            ConsoleChrome chrome = ConsoleChrome.of(access, s, "Row inspector");
            List<String> tables =
                    window.current().tables().stream().map(TableSchema::name).toList();
            String p = AdminAccess.storable(partition == null ? "" : partition.trim());
            String t = table == null ? "" : table;
            String id = AdminAccess.storable(rowId == null ? "" : rowId.trim());
            if (p.isEmpty() || t.isEmpty() || id.isEmpty()) {
                return page(chrome, Inspection.form(p, t, id, tables, false, ""));
            }
            TableSchema schema = window.current().table(t);
            if (schema == null) {
                return page(chrome, Inspection.form(p, t, id, tables, true, "unknown table"));
            }
            return storage.readPartition(p).flatMap(state -> {
                if (state == null) {
                    return page(chrome, Inspection.form(p, t, id, tables, true, "partition not found"));
                }
                return storage.readRows(p, t, List.of(id)).flatMap(found -> {
                    StoredRow row = found.get(id);
                    if (row == null) {
                        return page(chrome, Inspection.form(p, t, id, tables, true, "row not found"));
                    }
                    return touching(state, t, row)
                            .flatMap(commits -> storage.listClients(p)
                                    .flatMap(clients ->
                                            page(chrome, inspection(p, schema, row, tables, commits, clients))));
                });
            });
        });
    }

    private static Uni<Response> page(ConsoleChrome chrome, Inspection view) {
        return Uni.createFrom()
                .item(SignInPage.html(200, Templates.rows(chrome, view).render()));
    }

    /** The commits above the horizon (at most the newest {@value #COMMIT_WINDOW}) that changed the row. */
    private Uni<List<Touch>> touching(PartitionState state, String table, StoredRow row) {
        if (row.scopes().isEmpty()) {
            return Uni.createFrom().item(List.of());
        }
        Map<String, Set<String>> scopes = new java.util.TreeMap<>();
        row.scopes().forEach((k, v) -> scopes.put(k, Set.of(v)));
        long from = Math.max(state.horizonSeq(), state.maxCommitSeq() - COMMIT_WINDOW);
        return storage.readCommits(
                        state.partition(),
                        new CommitQuery(table, scopes, from, state.maxCommitSeq(), 10 * COMMIT_WINDOW))
                .map((CommitWindow w) -> {
                    List<Touch> out = new ArrayList<>();
                    for (StoredCommit c : w.commits()) {
                        for (StoredChange ch : c.changes()) {
                            if (ch.rowId().equals(row.rowId())) {
                                out.add(new Touch(
                                        c.commitSeq(),
                                        PartitionsPage.time(c.createdAtMs()),
                                        c.actorId(),
                                        c.clientId(),
                                        ch.op().toString().toLowerCase(java.util.Locale.ROOT),
                                        ch.rowVersion() == null ? "–" : String.valueOf(ch.rowVersion())));
                            }
                        }
                    }
                    java.util.Collections.reverse(out); // newest first
                    return out;
                });
    }

    private static Inspection inspection(
            String partition,
            TableSchema schema,
            StoredRow row,
            List<String> tables,
            List<Touch> commits,
            List<ClientRecord> clients) {
        List<Column> columns = new ArrayList<>();
        for (int i = 0; i < schema.columnCount() && i < row.values().length; i++) {
            columns.add(new Column(schema.column(i).name(), value(row.values()[i]), row.columnVersions()[i]));
        }
        List<Covering> covering = new ArrayList<>();
        List<NotCovering> notCovering = new ArrayList<>();
        for (ClientRecord c : clients) {
            List<RowCoverage.Subscription> subs = RowCoverage.of(c.subscriptionsJson(), schema.name(), row.scopes());
            List<String> ids = subs.stream()
                    .filter(RowCoverage.Subscription::covers)
                    .map(RowCoverage.Subscription::subscriptionId)
                    .toList();
            String basis = subs.stream().anyMatch(x -> x.basis().equals(RowCoverage.BASIS_REQUESTED))
                    ? RowCoverage.BASIS_REQUESTED
                    : RowCoverage.BASIS_EFFECTIVE;
            if (!ids.isEmpty()) {
                covering.add(new Covering(c.clientId(), c.actorId(), basis, String.join(", ", ids)));
                continue;
            }
            if (subs.isEmpty()) {
                notCovering.add(new NotCovering(c.clientId(), c.actorId(), "no subscription on " + schema.name()));
                continue;
            }
            List<String> why = new ArrayList<>();
            for (RowCoverage.Subscription x : subs) {
                String line = x.subscriptionId() + ": " + x.reason();
                if (x.scopeKey() != null) {
                    line += " (" + x.scopeKey() + " = " + x.rowValue() + ", reaching " + x.values() + ")";
                }
                why.add(line);
            }
            notCovering.add(new NotCovering(c.clientId(), c.actorId(), basis + " — " + String.join("; ", why)));
        }
        return new Inspection(
                partition,
                schema.name(),
                row.rowId(),
                tables,
                true,
                "",
                row.serverVersion(),
                new java.util.TreeMap<>(row.scopes()).toString(),
                columns,
                commits,
                covering,
                notCovering);
    }

    private static String value(Object v) {
        if (v == null) {
            return "null";
        }
        if (v instanceof byte[] b) {
            return "base64:" + Base64.getEncoder().encodeToString(b);
        }
        return String.valueOf(v);
    }
}
