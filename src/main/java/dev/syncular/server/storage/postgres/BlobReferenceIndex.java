package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.BlobReference;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The blob reference index (§5.9.4: which rows of a partition reference a blob, with the rows' stored scopes
 * for the §5.9.5 download authorization) in {@code sync_blob_refs}, the uploaders that a push may reference a blob
 * on the strength of (§5.9.6) in {@code sync_blob_uploads}, and the orphan-sweep marks (§5.9.2,
 * §5.9.6) in {@code sync_blob_sweeps}: a mark is {@code pending} from the sweep transaction that records it
 * (committed before any object is deleted) until the sweep deleted the object ({@link #settleSweeps}); a push
 * treats a pending mark like a mark above its own lookup. The index is maintained in the push transaction: {@link PushTransaction}
 * sends the statements built here ({@link #deleteRefs}, {@link #insertRefs}, {@link #recordSweeps}) with its
 * other writes.
 */
final class BlobReferenceIndex {
    private final Pool pool;

    private final String blobReferences;
    private final String blobReferencesAfter;
    private final String referencedBlobIds;
    private final String blobSweepMark;
    private final String deleteBlobRefs;
    private final String insertBlobRefs;
    private final String forgetBlobSweeps;
    private final String recordBlobSweeps;
    private final String settleBlobSweeps;
    private final String blobsSweptSince;
    private final String recordUpload;
    private final String uploadedBy;
    private final String forgetUploads;

    BlobReferenceIndex(Pool pool, String pgSchema) {
        this.pool = pool;
        String refs = PgSql.qualified(pgSchema, "sync_blob_refs");
        String sweeps = PgSql.qualified(pgSchema, "sync_blob_sweeps");
        String uploads = PgSql.qualified(pgSchema, "sync_blob_uploads");
        recordUpload = "INSERT INTO " + uploads + " (partition_id, blob_id, actor_id, uploaded_at_ms)"
                + " VALUES ($1, $2, $3, $4) ON CONFLICT (partition_id, blob_id, actor_id) DO NOTHING";
        uploadedBy =
                "SELECT blob_id FROM " + uploads + " WHERE partition_id = $1 AND actor_id = $2 AND blob_id = ANY($3)";
        forgetUploads = "DELETE FROM " + uploads + " WHERE partition_id = $1 AND blob_id = ANY($2)";
        blobReferences = "SELECT tbl, row_id, scopes::text FROM " + refs
                + " WHERE partition_id = $1 AND blob_id = $2 ORDER BY tbl, row_id LIMIT $3";
        blobReferencesAfter = "SELECT tbl, row_id, scopes::text FROM " + refs
                + " WHERE partition_id = $1 AND blob_id = $2 AND (tbl, row_id) > ($4, $5) ORDER BY tbl, row_id LIMIT $3";
        referencedBlobIds = "SELECT DISTINCT blob_id FROM " + refs + " WHERE partition_id = $1 AND blob_id = ANY($2)";
        blobSweepMark = "SELECT COALESCE(max(sweep_seq), 0) FROM " + sweeps + " WHERE partition_id = $1";
        deleteBlobRefs = "DELETE FROM " + refs + " WHERE partition_id = $1 AND tbl = $2 AND row_id = $3";
        insertBlobRefs = "INSERT INTO " + refs + " (partition_id, blob_id, tbl, row_id, scopes)"
                + " SELECT $1, b, $2, $3, $4::text::jsonb FROM unnest($5::text[]) AS u(b) ON CONFLICT DO NOTHING";
        forgetBlobSweeps = "DELETE FROM " + sweeps + " WHERE swept_at_ms < $1";
        recordBlobSweeps = "INSERT INTO " + sweeps + " (partition_id, blob_id, sweep_seq, swept_at_ms, pending)"
                + " SELECT $1, b, s.v, $2, true FROM unnest($3::text[]) AS u(b),"
                + " (SELECT nextval(" + PgSql.lit(PgSql.qualified(pgSchema, "sync_blob_sweep_seq"))
                + "::regclass) AS v) AS s"
                + " ON CONFLICT (partition_id, blob_id) DO UPDATE SET sweep_seq = EXCLUDED.sweep_seq,"
                + " swept_at_ms = EXCLUDED.swept_at_ms, pending = true RETURNING sweep_seq";
        settleBlobSweeps = "UPDATE " + sweeps + " SET pending = false"
                + " WHERE partition_id = $1 AND sweep_seq = $2 AND blob_id = ANY($3)";
        // §5.9.6: swept after the caller's lookups, or marked by a sweep whose deletion may not have happened yet
        // when the caller looked (the object may still have been there then, and be gone by the commit)
        blobsSweptSince = "SELECT blob_id FROM " + sweeps + " WHERE partition_id = $1 AND (sweep_seq > $2 OR pending)"
                + " AND blob_id = ANY($3)";
    }

    // ---- reads ----------------------------------------------------------------------------------------

    Uni<List<BlobReference>> readBlobReferences(String partition, String blobId, BlobReference after, int limit) {
        Tuple args = Tuple.of(partition, blobId, limit);
        if (after != null) {
            args.addValue(after.table()).addValue(after.rowId());
        }
        return pool.preparedQuery(after == null ? blobReferences : blobReferencesAfter)
                .execute(args)
                .map(rs -> {
                    List<BlobReference> out = new ArrayList<>();
                    for (Row r : rs) {
                        out.add(new BlobReference(
                                r.getString(0), r.getString(1), StoredScopes.parseScopes(r.getString(2))));
                    }
                    return out;
                });
    }

    Uni<Set<String>> readReferencedBlobIds(String partition, Collection<String> blobIds) {
        return readReferencedBlobIds(pool, partition, blobIds);
    }

    Uni<Set<String>> readReferencedBlobIds(SqlClient c, String partition, Collection<String> blobIds) {
        if (blobIds.isEmpty()) {
            return Uni.createFrom().item(Set.of());
        }
        return c.preparedQuery(referencedBlobIds)
                .execute(Tuple.of(partition).addArrayOfString(blobIds.toArray(String[]::new)))
                .map(BlobReferenceIndex::firstColumnSet);
    }

    Uni<Long> readBlobSweepMark(String partition) {
        return pool.preparedQuery(blobSweepMark)
                .execute(Tuple.of(partition))
                .map(rs -> rs.iterator().next().getLong(0));
    }

    Uni<Void> recordUpload(String partition, String blobId, String actorId, long nowMs) {
        return pool.preparedQuery(recordUpload)
                .execute(Tuple.of(partition, blobId, actorId, nowMs))
                .replaceWithVoid();
    }

    Uni<Set<String>> uploadedBy(String partition, String actorId, Collection<String> blobIds) {
        if (blobIds.isEmpty()) {
            return Uni.createFrom().item(Set.of());
        }
        return pool.preparedQuery(uploadedBy)
                .execute(Tuple.of(partition, actorId).addArrayOfString(blobIds.toArray(String[]::new)))
                .map(BlobReferenceIndex::firstColumnSet);
    }

    /** The blobs of {@code blobIds} swept after {@code sweepMark} ({@code blobIds} not empty). */
    Uni<Set<String>> sweptSince(SqlClient c, String partition, long sweepMark, Collection<String> blobIds) {
        return c.preparedQuery(blobsSweptSince)
                .execute(Tuple.of(partition, sweepMark).addArrayOfString(blobIds.toArray(String[]::new)))
                .map(BlobReferenceIndex::firstColumnSet);
    }

    private static Set<String> firstColumnSet(RowSet<Row> rs) {
        Set<String> out = new HashSet<>();
        for (Row r : rs) {
            out.add(r.getString(0));
        }
        return out;
    }

    // ---- maintenance statements of the push transaction (not subscribed: the caller sends them) -------

    /** Drops the row's entries. */
    Uni<RowSet<Row>> deleteRefs(SqlClient c, String partition, String table, String rowId) {
        return c.preparedQuery(deleteBlobRefs).execute(Tuple.of(partition, table, rowId));
    }

    /** Adds the row's entries for {@code blobIds} (not empty) with the row's stored scopes JSON. */
    Uni<RowSet<Row>> insertRefs(
            SqlClient c, String partition, String table, String rowId, String scopesJson, String[] blobIds) {
        return c.preparedQuery(insertBlobRefs)
                .execute(Tuple.of(partition, table, rowId, scopesJson).addArrayOfString(blobIds));
    }

    /** Forgets every partition's sweep marks older than {@code forgetBeforeMs}; yields how many. */
    Uni<Long> forgetSweeps(long forgetBeforeMs) {
        return pool.preparedQuery(forgetBlobSweeps)
                .execute(Tuple.of(forgetBeforeMs))
                .map(rs -> (long) rs.rowCount());
    }

    /**
     * Marks {@code blobIds} (not empty) swept and pending deletion: one nextval for the whole batch, so the new
     * mark is above every earlier mark of the partition (sweeps of a partition are serialized by its lock, the
     * sequence only grows). Yields the mark.
     */
    Uni<Long> recordSweeps(SqlClient c, String partition, long nowMs, Collection<String> blobIds) {
        return c.preparedQuery(recordBlobSweeps)
                .execute(Tuple.of(partition, nowMs).addArrayOfString(blobIds.toArray(String[]::new)))
                .map(rs -> rs.iterator().next().getLong(0));
    }

    /**
     * The objects of {@code blobIds} marked under {@code sweepMark} are deleted: no longer pending. A later
     * sweep's mark of the same blob (another mark) stays pending, and the blobs' upload records are forgotten.
     */
    Uni<Void> settleSweeps(String partition, long sweepMark, Collection<String> blobIds) {
        if (blobIds.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        String[] ids = blobIds.toArray(String[]::new);
        // the object is gone: so is what its uploads entitled (a re-upload records again)
        return pool.preparedQuery(settleBlobSweeps)
                .execute(Tuple.of(partition, sweepMark).addArrayOfString(ids))
                .flatMap(rs -> pool.preparedQuery(forgetUploads)
                        .execute(Tuple.of(partition).addArrayOfString(ids)))
                .replaceWithVoid();
    }
}
