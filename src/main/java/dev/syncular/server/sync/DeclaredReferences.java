package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.ReferenceDef;
import dev.syncular.server.schema.ScopePattern;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.ChangeToWrite;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.StoredRow;
import dev.syncular.server.sync.PushOperations.Rejection;
import dev.syncular.server.sync.PushOperations.Staged;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.RecoveryDetails;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * §6.11 declared references, enforced once per commit over the candidate state (staged over stored):
 * upserts need their parent, and parent deletes restrict, cascade or set children to NULL — appended
 * operations emit ordinary changes and attribute a rejection to the originating client delete. A violation
 * is {@code sync.reference_violation} with its §6.3.1 details.
 *
 * <p>References stay inside the writer's grant (§3.4: an actor changes and learns nothing outside its allowed
 * scopes). A stored parent whose scope values the pushing actor is not allowed is treated exactly as an absent
 * one ({@code missing_parent} with the same details, so the answer is no existence oracle), and a parent delete
 * sees only the children the actor could write itself: a child outside the grant neither restricts the delete
 * nor is cascade-deleted or set to NULL — it keeps its reference, like a child whose parent a window evicted
 * (§4.8, §6.11: replicas never enforce a reference).
 */
final class DeclaredReferences {
    static final int CASCADE_CAP = 1000;

    private DeclaredReferences() {}

    /**
     * @param grant the pushing actor's allowed scopes (§3.2), or {@code null} when none resolved (then no stored
     *     row is inside the grant)
     */
    static Uni<Rejection> enforce(
            CompiledSchema schema,
            PushTx tx,
            Map<String, Staged> staged,
            List<ChangeToWrite> changes,
            Map<String, List<String>> grant) {
        List<Staged> initial = new ArrayList<>(staged.values());
        // iterative (a large commit never grows the stack); the first rejection stops the walk
        return Multi.createFrom()
                .iterable(initial)
                .onItem()
                .transformToUniAndConcatenate(s -> parent(schema, tx, staged, s, grant))
                .toUni()
                .flatMap(r -> r != null
                        ? Uni.createFrom().item(r)
                        : deletes(schema, tx, staged, changes, new ArrayList<>(initial), 0, new int[] {0}, grant));
    }

    /**
     * A staged upsert whose present, non-null reference column names a parent must find it: the rejection,
     * or a {@code null} item when every parent exists. A stored parent outside the grant is absent (§3.4); a
     * parent staged by this commit passed the §3.4 check when it was staged.
     */
    private static Uni<Rejection> parent(
            CompiledSchema schema, PushTx tx, Map<String, Staged> staged, Staged s, Map<String, List<String>> grant) {
        TableSchema table = schema.table(s.table());
        if (s.row() == null || s.present() == null || table.references().isEmpty()) {
            return Uni.createFrom().nullItem();
        }
        List<Uni<Rejection>> checks = new ArrayList<>();
        for (ReferenceDef ref : table.references()) {
            int col = table.columnIndex(ref.column());
            Object value = s.row().values()[col];
            if (!s.present()[col] || value == null) {
                continue;
            }
            TableSchema parent = schema.table(ref.parentTable());
            String parentId = parent.primaryKeyColumn().type().rowIdOf(value);
            Staged inCommit = staged.get(parent.name() + '\u0000' + parentId);
            Uni<Boolean> exists = inCommit != null
                    ? Uni.createFrom().item(inCommit.row() != null)
                    : tx.readRows(parent.name(), List.of(parentId)).map(m -> {
                        StoredRow found = m.get(parentId);
                        return found != null
                                && grant != null
                                && EffectiveScopes.authorizesRow(parent, found.values(), grant);
                    });
            checks.add(exists.map(ok -> ok
                    ? null
                    : rejection(
                            s.opIndex(),
                            "missing_parent",
                            List.of(ref.column()),
                            Map.of("parent", parent.name(), "row", parentId))));
        }
        if (checks.isEmpty()) {
            return Uni.createFrom().nullItem();
        }
        return Uni.join().all(checks).andFailFast().map(rs -> {
            for (Rejection r : rs) {
                if (r != null) {
                    return r;
                }
            }
            return null;
        });
    }

    /** Walks staged deletes (the queue grows with cascaded ones) and applies each child reference's rule. */
    private static Uni<Rejection> deletes(
            CompiledSchema schema,
            PushTx tx,
            Map<String, Staged> staged,
            List<ChangeToWrite> changes,
            List<Staged> queue,
            int from,
            int[] appended,
            Map<String, List<String>> grant) {
        int skip = from;
        while (skip < queue.size() && queue.get(skip).row() != null) {
            skip++; // upserts: nothing to cascade (a loop, not a call per row)
        }
        int i = skip;
        if (i == queue.size()) {
            return Uni.createFrom().nullItem();
        }
        Staged parentDelete = queue.get(i);
        TableSchema parent = schema.table(parentDelete.table());
        List<Object[]> work = new ArrayList<>();
        for (TableSchema child : schema.tables()) {
            for (ReferenceDef ref : child.references()) {
                if (ref.parentTable().equals(parent.name())) {
                    work.add(new Object[] {child, ref});
                }
            }
        }
        return children(schema, tx, staged, changes, queue, parentDelete, parent, work, 0, appended, grant)
                .flatMap(r -> r != null
                        ? Uni.createFrom().item(r)
                        : deletes(schema, tx, staged, changes, queue, i + 1, appended, grant));
    }

    private static Uni<Rejection> children(
            CompiledSchema schema,
            PushTx tx,
            Map<String, Staged> staged,
            List<ChangeToWrite> changes,
            List<Staged> queue,
            Staged parentDelete,
            TableSchema parent,
            List<Object[]> work,
            int w,
            int[] appended,
            Map<String, List<String>> grant) {
        if (w == work.size()) {
            return Uni.createFrom().nullItem();
        }
        TableSchema child = (TableSchema) work.get(w)[0];
        ReferenceDef ref = (ReferenceDef) work.get(w)[1];
        int col = child.columnIndex(ref.column());
        Object parentKey = parentKeyValue(parent, parentDelete.rowId());
        Map<String, List<String>> within = within(child, grant);
        // §3.4: only the children inside the grant (filtered by the storage, so children outside it never use up
        // the cascade cap's read); none when the grant lacks one of the child's scope variables
        Uni<List<StoredRow>> read = within == null
                ? Uni.createFrom().item(List.of())
                : tx.readRowsWhereWithin(child.name(), ref.column(), parentKey, within, CASCADE_CAP + 1);
        return read.flatMap(stored -> {
            List<StoredRow> live = new ArrayList<>();
            for (StoredRow r : stored) {
                Staged s = staged.get(child.name() + '\u0000' + r.rowId());
                if (s == null) {
                    live.add(r);
                } else if (s.row() != null && Objects.equals(s.row().values()[col], r.values()[col])) {
                    live.add(s.row());
                }
            }
            if (live.isEmpty()) {
                return children(schema, tx, staged, changes, queue, parentDelete, parent, work, w + 1, appended, grant);
            }
            switch (ref.onDelete()) {
                case RESTRICT:
                    return Uni.createFrom()
                            .item(rejection(
                                    parentDelete.opIndex(), "restricted_delete", null, Map.of("child", child.name())));
                case CASCADE:
                    for (StoredRow r : live) {
                        if (++appended[0] > CASCADE_CAP) {
                            return Uni.createFrom()
                                    .item(rejection(parentDelete.opIndex(), "cascade_limit", null, null));
                        }
                        Staged del = new Staged(child.name(), r.rowId(), null, parentDelete.opIndex(), null);
                        staged.put(child.name() + '\u0000' + r.rowId(), del);
                        changes.add(ChangeToWrite.delete(child.name(), r.rowId(), r.scopes()));
                        queue.add(del);
                    }
                    break;
                default: // SET NULL: a sparse upsert presenting only the reference column (§6.2).
                    for (StoredRow r : live) {
                        if (++appended[0] > CASCADE_CAP) {
                            return Uni.createFrom()
                                    .item(rejection(parentDelete.opIndex(), "cascade_limit", null, null));
                        }
                        long next = r.serverVersion() + 1;
                        Object[] values = r.values().clone();
                        values[col] = null;
                        long[] versions = r.columnVersions().clone();
                        versions[col] = next;
                        StoredRow updated = new StoredRow(r.rowId(), next, values, versions, r.scopes());
                        staged.put(
                                child.name() + '\u0000' + r.rowId(),
                                new Staged(child.name(), r.rowId(), updated, parentDelete.opIndex(), null));
                        changes.add(ChangeToWrite.upsert(child.name(), r.rowId(), next, r.scopes(), values));
                    }
                    break;
            }
            return children(schema, tx, staged, changes, queue, parentDelete, parent, work, w + 1, appended, grant);
        });
    }

    /**
     * The grant's values for each scope variable of {@code child} (a {@code '*'} variable unrestricted), or
     * {@code null} when the grant authorizes no row of the table (no grant, or a variable without values).
     */
    private static Map<String, List<String>> within(TableSchema child, Map<String, List<String>> grant) {
        if (grant == null) {
            return null;
        }
        Map<String, List<String>> out = new LinkedHashMap<>();
        for (ScopePattern p : child.scopePatterns()) {
            List<String> values = grant.get(p.variable());
            if (values == null || values.isEmpty()) {
                return null;
            }
            if (!values.contains(EffectiveScopes.WILDCARD)) {
                out.put(p.variable(), values);
            }
        }
        return out;
    }

    private static Object parentKeyValue(TableSchema parent, String rowId) {
        return switch (parent.primaryKeyColumn().type()) {
            case INTEGER -> Long.parseLong(rowId);
            case BOOLEAN -> Boolean.parseBoolean(rowId);
            default -> rowId;
        };
    }

    /** A {@code sync.reference_violation} with its bounded §6.3.1 details (dropped members that do not fit). */
    private static Rejection rejection(int opIndex, String reason, List<String> fieldPaths, Map<String, String> refs) {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("reason", reason);
        if (fieldPaths != null) {
            details.put("fieldPaths", fieldPaths);
        }
        if (refs != null) {
            details.put("references", refs);
        }
        String json = CanonicalJson.write(details);
        if (!RecoveryDetails.isValid(json)) {
            json = CanonicalJson.write(Map.of("reason", reason));
        }
        return new Rejection(
                new OpResult.Error(opIndex, ErrorCode.REFERENCE_VIOLATION.code, "declared reference violated", false),
                json);
    }
}
