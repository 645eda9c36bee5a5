package dev.syncular.server.sync;

import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.PushTx;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.wire.BlobRefShape;
import dev.syncular.server.wire.ColumnType;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.SparseRow;
import dev.syncular.server.wire.SparseRowCodec;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The §5.9.6 / §6.6 push-time existence check of one commit: every blob a pushed upsert's present, non-NULL
 * {@code blob_ref} value names must be in the partition's blob store, else that operation is rejected with
 * {@code blob.not_found} and the commit rolls back whole.
 *
 * <p>A stored blob counts only when the pushing actor is entitled to it (§5.9.5: "a blobId is never a
 * capability"): it uploaded the blob ({@link SyncStorage#recordBlobUpload}), or it may see a row that references
 * it (the §5.9.5 download rule under the actor's allowed scopes, §3.4). Otherwise the operation gets the same
 * {@code blob.not_found} as for an unknown blob, so a reference cannot make another scope's blob downloadable
 * (the download rule trusts the referencing rows) and the answer reveals nothing about the blob.
 *
 * <p>The store lookups run before the partition lock is taken (an object-store round trip, or a query on
 * another pooled connection, never happens while a push holds the lock and its connection). What the orphan
 * sweep may delete in between is caught under the lock: the sweep commits a mark for each blob it will delete
 * (above the one read here before the lookups, {@link SyncStorage#readBlobSweepMark}, and pending until the
 * object is gone) before deleting anything, and {@link #recheck} asks for marks above the lookup's or pending
 * inside the push transaction. The sweep re-reads the reference index under the same lock, so either the
 * push's references are committed first (the sweep keeps the blob) or the sweep's mark is (the push is
 * rejected).
 */
final class BlobPresence {
    /** A commit that references no blob: nothing to look up. */
    static final BlobPresence NONE = new BlobPresence(0L, Map.of());

    private final long sweepMark;
    private final Map<String, Boolean> present;

    private BlobPresence(long sweepMark, Map<String, Boolean> present) {
        this.sweepMark = sweepMark;
        this.present = present;
    }

    /** The blob ids the row references: its present, non-NULL {@code blob_ref} values, in column order. */
    static Set<String> referenced(TableSchema table, SparseRow row) {
        Set<String> ids = null;
        for (int i = 0; i < table.columnCount() && i < row.present().length; i++) {
            if (table.column(i).type() != ColumnType.BLOB_REF || !row.present()[i] || row.values()[i] == null) {
                continue;
            }
            String id = BlobRefShape.blobIdOf(row.values()[i].toString());
            if (ids == null) {
                ids = new LinkedHashSet<>();
            }
            // a value that passed the decode-time shape check always has an id; an unreadable one never resolves
            ids.add(id == null ? "" : id);
        }
        return ids == null ? Set.of() : ids;
    }

    private static boolean hasBlobRefs(TableSchema table) {
        for (int i = 0; i < table.columnCount(); i++) {
            if (table.column(i).type() == ColumnType.BLOB_REF) {
                return true;
            }
        }
        return false;
    }

    /**
     * Looks up every blob the commit's upserts reference ({@link BlobStore#NONE}: a server without a blob store,
     * where no blob exists). Payloads that fail to decode are skipped here; the apply path rejects them.
     */
    static Uni<BlobPresence> precheck(
            BlobStore store,
            SyncStorage storage,
            String partition,
            String actorId,
            Map<String, List<String>> allowed,
            CompiledSchema current,
            CompiledSchema client,
            PushCommit commit) {
        Set<String> ids = new LinkedHashSet<>();
        for (PushOperation op : commit.operations()) {
            if (op.op() != Op.UPSERT) {
                continue;
            }
            TableSchema table = current.table(op.table());
            TableSchema clientTable = client.table(op.table());
            if (table == null || clientTable == null || !hasBlobRefs(table)) {
                continue;
            }
            try {
                ids.addAll(referenced(table, new SparseRowCodec(clientTable.rowLayout()).decode(op.payload())));
            } catch (RuntimeException e) {
                // an undecodable payload is answered by the apply path
            }
        }
        ids.remove("");
        if (ids.isEmpty()) {
            return Uni.createFrom().item(NONE);
        }
        if (store == BlobStore.NONE) {
            Map<String, Boolean> none = new HashMap<>();
            ids.forEach(id -> none.put(id, false));
            return Uni.createFrom().item(new BlobPresence(0L, none));
        }
        List<String> list = new ArrayList<>(ids);
        return storage.readBlobSweepMark(partition).flatMap(mark -> {
            List<Uni<Boolean>> lookups = new ArrayList<>();
            for (String id : list) {
                lookups.add(store.has(partition, id));
            }
            return Uni.join().all(lookups).andFailFast().flatMap(found -> {
                List<String> stored = new ArrayList<>();
                for (int i = 0; i < list.size(); i++) {
                    if (Boolean.TRUE.equals(found.get(i))) {
                        stored.add(list.get(i));
                    }
                }
                return entitled(storage, current, partition, actorId, allowed, stored)
                        .map(ok -> {
                            Map<String, Boolean> present = new HashMap<>();
                            for (String id : list) {
                                present.put(id, ok.contains(id));
                            }
                            return new BlobPresence(mark, present);
                        });
            });
        });
    }

    /** The stored blobs of {@code stored} the actor may reference: uploaded by it, or referenced by a row it sees. */
    private static Uni<Set<String>> entitled(
            SyncStorage storage,
            CompiledSchema current,
            String partition,
            String actorId,
            Map<String, List<String>> allowed,
            List<String> stored) {
        if (stored.isEmpty()) {
            return Uni.createFrom().item(Set.of());
        }
        return storage.readBlobsUploadedBy(partition, actorId, stored).flatMap(uploaded -> {
            Set<String> ok = new LinkedHashSet<>(uploaded);
            List<String> rest = new ArrayList<>(stored);
            rest.removeAll(uploaded);
            if (rest.isEmpty() || allowed == null) {
                return Uni.createFrom().item(ok);
            }
            List<Uni<Boolean>> visible = new ArrayList<>();
            for (String id : rest) {
                visible.add(BlobService.visibleReference(storage, current, partition, id, allowed));
            }
            return Uni.join().all(visible).andFailFast().map(seen -> {
                for (int i = 0; i < rest.size(); i++) {
                    if (Boolean.TRUE.equals(seen.get(i))) {
                        ok.add(rest.get(i));
                    }
                }
                return ok;
            });
        });
    }

    /** Under the partition lock: blobs a sweep marked since the lookups, or is still deleting, count as absent. */
    Uni<BlobPresence> recheck(PushTx tx) {
        List<String> found = new ArrayList<>();
        present.forEach((id, ok) -> {
            if (ok) {
                found.add(id);
            }
        });
        if (found.isEmpty()) {
            return Uni.createFrom().item(this);
        }
        return tx.blobsSweptSince(found, sweepMark).map(swept -> {
            if (swept.isEmpty()) {
                return this;
            }
            Map<String, Boolean> after = new HashMap<>(present);
            swept.forEach(id -> after.put(id, false));
            return new BlobPresence(sweepMark, after);
        });
    }

    /** Whether the upserted row references a blob that is not stored. */
    boolean missingAny(TableSchema table, SparseRow row) {
        for (String id : referenced(table, row)) {
            if (!Boolean.TRUE.equals(present.get(id))) {
                return true;
            }
        }
        return false;
    }
}
