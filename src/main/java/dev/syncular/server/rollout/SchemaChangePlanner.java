package dev.syncular.server.rollout;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.ImpliedWindow;
import dev.syncular.server.schema.SchemaException;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.SchemaPlanReads;
import dev.syncular.server.storage.StorableText;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.StoragePlan;
import dev.syncular.server.wire.Json;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.LongSupplier;

/**
 * A schema change's plan, before it runs (docs/SCHEMA.md "Rolling out a schema change"): whether the change is
 * allowed and why not, the statements the storage would run with their locks and estimated times, the backfills it
 * needs, the §9 window it implies, the clients it affects and what the serve gate does during the rollout.
 *
 * <p>Every decision comes from the code that applies a schema: {@link SchemaLoader} compiles the document as
 * start-up does, {@link ImpliedWindow} applies start-up's window rule ({@link SchemaWindow#checkOlder}), and the
 * storage reports the step start-up would take on its marker ({@link SchemaPlanReads}). Nothing is changed.
 */
public final class SchemaChangePlanner {
    /** The {@link SchemaException#reason()} of a document that is no JSON object: bad input rather than a change. */
    public static final String INVALID_DOCUMENT = "invalid_document";

    private final SchemaPlanReads storage;
    private final SchemaWindow served;
    private final Set<String> crdtTypes;
    private final LongSupplier clockMs;

    public SchemaChangePlanner(
            SchemaPlanReads storage, SchemaWindow served, Set<String> crdtTypes, LongSupplier clockMs) {
        this.storage = storage;
        this.served = served;
        this.crdtTypes = Set.copyOf(crdtTypes);
        this.clockMs = clockMs;
    }

    /** A backfill checkpoint the new build declares ({@code syncular.checkpoints}), at the new schema version. */
    public record Checkpoint(String partition, String name) {
        public Checkpoint {
            Objects.requireNonNull(partition, "partition");
            Objects.requireNonNull(name, "name");
        }
    }

    /** Client records counted by default: the last 30 days. */
    public static final int DEFAULT_DAYS = 30;

    public static final int MAX_DAYS = 3650;

    /**
     * How far back client records count: {@code raw} an integer in {@code [1, MAX_DAYS]}, {@value #DEFAULT_DAYS} when
     * null or empty; anything else is an {@link IllegalArgumentException}.
     */
    public static int days(String raw) {
        if (raw == null || raw.isBlank()) {
            return DEFAULT_DAYS;
        }
        String d = raw.trim();
        if (!d.matches("[0-9]{1,4}") || Integer.parseInt(d) < 1 || Integer.parseInt(d) > MAX_DAYS) {
            throw new IllegalArgumentException("days");
        }
        return Integer.parseInt(d);
    }

    /**
     * Checkpoints written {@code <partition>:<name>} (split at the last colon), both parts non-empty and storable
     * ({@link StorableText#storableKey}); blank entries are skipped, anything else is an
     * {@link IllegalArgumentException}.
     */
    public static List<Checkpoint> checkpoints(List<String> raw) {
        List<Checkpoint> out = new ArrayList<>();
        for (String entry : raw == null ? List.<String>of() : raw) {
            String c = entry.trim();
            if (c.isEmpty()) {
                continue;
            }
            int at = c.lastIndexOf(':');
            if (at <= 0 || at == c.length() - 1) {
                throw new IllegalArgumentException("checkpoint");
            }
            String partition = c.substring(0, at);
            String name = c.substring(at + 1);
            if (!StorableText.storableKey(partition) || !StorableText.storableKey(name)) {
                throw new IllegalArgumentException("checkpoint");
            }
            out.add(new Checkpoint(partition, name));
        }
        return out;
    }

    /**
     * The plan of serving {@code document} (a schema IR or short-form JSON document, {@code null} for none) as the new
     * current schema.
     *
     * @param checkpoints the checkpoints the new build declares
     * @param clientDays  how far back client records count, in days
     * @throws SchemaException {@code invalid_document} when it is no JSON object (bad input, not a change); every
     *     other compile refusal is a plan that is not allowed
     */
    public Uni<ObjectNode> plan(JsonNode document, List<Checkpoint> checkpoints, int clientDays) {
        CompiledSchema next;
        try {
            next = SchemaLoader.compile(document, crdtTypes);
        } catch (SchemaException e) {
            if (INVALID_DOCUMENT.equals(e.reason())) {
                throw e;
            }
            ObjectNode out = head(false, refusal(e.code(), e.getMessage(), e.details()));
            out.putNull("nextSchemaVersion");
            return Uni.createFrom().item(out);
        }
        long since = clockMs.getAsLong() - clientDays * 86_400_000L;
        return storage.planSchema(next, since).map(p -> render(next, p, checkpoints, clientDays));
    }

    private ObjectNode head(boolean allowed, ObjectNode refusal) {
        ObjectNode out = Json.object();
        out.put("allowed", allowed);
        out.set("refusal", refusal == null ? Json.nodes().nullNode() : refusal);
        out.put("runningSchemaVersion", served.current().version());
        return out;
    }

    private static ObjectNode refusal(String code, String message, Map<String, Object> details) {
        ObjectNode r = Json.object();
        r.put("code", code);
        r.put("message", message);
        ObjectNode d = r.putObject("details");
        details.forEach((k, v) -> d.putPOJO(k, v));
        return r;
    }

    private ObjectNode render(CompiledSchema next, StoragePlan p, List<Checkpoint> checkpoints, int clientDays) {
        StorageException refused = p.refusal();
        ObjectNode out = head(
                refused == null,
                refused == null ? null : refusal(refused.code(), refused.getMessage(), refused.details()));
        out.put("nextSchemaVersion", next.version());
        out.put("storedSchemaVersion", p.storedVersion());

        ObjectNode storageNode = out.putObject("storage");
        storageNode.put("action", p.action());
        storageNode.set("ddl", statements(p.ddl()));
        storageNode.set("concurrentDdl", statements(p.concurrentDdl()));
        storageNode.put("partitions", p.partitions());
        storageNode.put("writesBlockedMs", p.writesBlockedMs());
        long concurrentMs = 0;
        for (StoragePlan.Statement s : p.concurrentDdl()) {
            concurrentMs += s.estimatedMs();
        }
        storageNode.put("concurrentMs", concurrentMs);

        Map<String, StoragePlan.TableSize> sizes = new LinkedHashMap<>();
        p.tables().forEach(t -> sizes.put(t.table(), t));
        out.set("backfills", backfills(next, sizes, checkpoints));

        ImpliedWindow implied = ImpliedWindow.of(next, served);
        ObjectNode windowNode = out.putObject("window");
        ArrayNode versions = windowNode.putArray("versions");
        implied.window().versions().forEach(versions::add);
        ArrayNode excluded = windowNode.putArray("excluded");
        for (ImpliedWindow.Excluded e : implied.excluded()) {
            ObjectNode x = excluded.addObject();
            x.put("version", e.version());
            x.put("message", e.message());
            ObjectNode d = x.putObject("details");
            e.details().forEach((k, v) -> d.putPOJO(k, v));
        }

        out.set("clients", clients(next, implied.window(), p, clientDays));
        out.set("serveGate", serveGate(p, checkpoints, concurrentMs));
        return out;
    }

    private static ArrayNode statements(List<StoragePlan.Statement> list) {
        ArrayNode a = Json.array();
        for (StoragePlan.Statement s : list) {
            ObjectNode o = a.addObject();
            o.put("sql", s.sql());
            if (s.table() != null) {
                o.put("table", s.table());
            }
            o.put("lock", s.lock());
            o.put("blocksWrites", s.blocksWrites());
            o.put("rows", s.rows());
            o.put("estimatedMs", s.estimatedMs());
        }
        return a;
    }

    /**
     * §2.4 backfills: each table the storage holds to which the upgrade adds columns. Existing rows hold NULL in them;
     * a backfill (a checkpoint per partition, {@code syncular-server backfill}) fills them before the version is
     * served there. Required when an appended column is declared not null (the new schema promises a value every
     * existing row lacks); every partition with rows is listed with its rows, and the checkpoint the new build
     * declares for it, if any.
     */
    private ArrayNode backfills(
            CompiledSchema next, Map<String, StoragePlan.TableSize> sizes, List<Checkpoint> checkpoints) {
        ArrayNode out = Json.array();
        for (TableSchema t : next.tables()) {
            StoragePlan.TableSize size = sizes.get(t.name());
            if (size == null || size.addedColumns().isEmpty()) {
                continue;
            }
            ObjectNode b = out.addObject();
            b.put("table", t.name());
            ArrayNode cols = b.putArray("columns");
            boolean required = false;
            for (String name : size.addedColumns()) {
                cols.add(name);
                required |= !t.column(name).nullable();
            }
            b.put("required", required);
            b.put("rows", size.rows());
            ArrayNode parts = b.putArray("partitions");
            for (Map.Entry<String, Long> e : size.rowsByPartition().entrySet()) {
                ObjectNode part = parts.addObject();
                part.put("partition", e.getKey());
                part.put("rows", e.getValue());
                String name = null;
                for (Checkpoint c : checkpoints) {
                    if (c.partition().equals(e.getKey())) {
                        name = c.name();
                    }
                }
                if (name == null) {
                    part.putNull("checkpoint");
                } else {
                    part.put("checkpoint", name);
                }
            }
        }
        return out;
    }

    /**
     * Per schema version seen in the client records: clients and actors, whether the implied window serves it or
     * the §1.6 floor refuses it (naming the window's oldest version as required), and the tables the client
     * re-bootstraps when it moves to the new version — those it subscribes to whose columns differ between its
     * version and the new one (every subscribed table when its version's schema is not served any more), with
     * the rows and bytes their subscriptions' current scopes reach ({@link StoragePlan.TableReach}).
     */
    private ObjectNode clients(CompiledSchema next, SchemaWindow window, StoragePlan p, int clientDays) {
        ObjectNode out = Json.object();
        out.put("days", clientDays);
        long refusedClients = 0;
        long refusedActors = 0;
        ArrayNode versions = out.putArray("versions");
        for (StoragePlan.ClientVersion v : p.clients()) {
            ObjectNode o = versions.addObject();
            o.put("schemaVersion", v.schemaVersion());
            o.put("clients", v.clients());
            o.put("actors", v.actors());
            if (v.schemaVersion() == 0) {
                o.putNull("served"); // no subscription recorded: the version is not known
                o.putNull("requiredSchemaVersion");
            } else if (window.serves(v.schemaVersion())) {
                o.put("served", true);
                o.putNull("requiredSchemaVersion");
            } else {
                o.put("served", false);
                o.put("requiredSchemaVersion", window.oldest().version());
                refusedClients += v.clients();
                refusedActors += v.actors();
            }
            CompiledSchema theirs = served.forVersion(v.schemaVersion());
            ArrayNode rebootstrap = o.putArray("rebootstrap");
            for (Map.Entry<String, StoragePlan.TableReach> e : v.tables().entrySet()) {
                TableSchema now = next.table(e.getKey());
                TableSchema then = theirs == null ? null : theirs.table(e.getKey());
                if (now == null || (then != null && then.columns().equals(now.columns()))) {
                    continue;
                }
                ObjectNode r = rebootstrap.addObject();
                r.put("table", e.getKey());
                r.put("clients", e.getValue().clients());
                r.put("rows", e.getValue().rows());
                r.put("bytes", e.getValue().bytes());
            }
        }
        out.put("refusedClients", refusedClients);
        out.put("refusedActors", refusedActors);
        return out;
    }

    /**
     * §2.4 serve gate during the rollout. The first pod of the new build migrates at start-up (out of rotation until
     * its migration and index builds are done, pushes held back for the transaction); from the migration's commit
     * every pod of the running build is unready ({@code schema_newer}) until it is replaced; a partition with a
     * checkpoint the new build declares is refused by every process that does not declare it until it is activated.
     */
    private ObjectNode serveGate(StoragePlan p, List<Checkpoint> checkpoints, long concurrentMs) {
        ObjectNode g = Json.object();
        boolean migrates = StoragePlan.CREATE.equals(p.action()) || StoragePlan.UPGRADE.equals(p.action());
        g.put("migrates", migrates);
        g.put("newPodUnreadyMs", migrates ? p.writesBlockedMs() + concurrentMs : 0);
        g.put("pushesHeldBackMs", migrates ? p.writesBlockedMs() : 0);
        // from the migration's commit until replaced: readiness DOWN, reason schema_newer
        g.put("runningPodsUnready", migrates);
        Set<String> partitions = new TreeSet<>();
        checkpoints.forEach(c -> partitions.add(c.partition()));
        ArrayNode held = g.putArray("checkpointPartitions");
        partitions.forEach(held::add);
        List<String> notes = new ArrayList<>();
        if (!partitions.isEmpty()) {
            notes.add("processes that do not declare a partition's checkpoint refuse it until it is activated");
        }
        ArrayNode n = g.putArray("notes");
        notes.forEach(n::add);
        return g;
    }
}
