package dev.syncular.server.blobs.postgres;

import dev.syncular.server.blobs.BlobContent;
import dev.syncular.server.blobs.BlobInfo;
import dev.syncular.server.blobs.BlobKey;
import dev.syncular.server.blobs.BlobPage;
import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.storage.postgres.DdlStep;
import dev.syncular.server.storage.postgres.PostgresSyncStorage;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The embedded (zero-setup) {@link BlobStore}: blob bytes in PostgreSQL, in the PostgreSQL schema given at
 * construction (the sync storage's, {@code syncular.storage.pg-schema}).
 *
 * <h2>DDL</h2>
 *
 * {@code sync_blobs(partition_id text COLLATE "C", blob_id text COLLATE "C", bytes bytea, byte_length bigint,
 * media_type text NULL, created_at_ms bigint, PRIMARY KEY (partition_id, blob_id))} — one immutable row per
 * (partition, content address). A re-upload is {@code INSERT ... ON CONFLICT DO NOTHING}, so the first
 * upload's {@code created_at_ms} stays. The sweep listing walks the primary key.
 *
 * <p>Bytes travel as one {@code bytea} parameter: an upload is held in memory once while it is written
 * (keep {@code syncular.blobs.max-bytes} in proportion to the heap).
 */
public final class PostgresBlobStore implements BlobStore {
    private final Pool pool;
    private final String pgSchema;

    public PostgresBlobStore(Pool pool, String pgSchema) {
        this.pool = Objects.requireNonNull(pool, "pool");
        this.pgSchema = Objects.requireNonNull(pgSchema, "pgSchema");
    }

    public String pgSchema() {
        return pgSchema;
    }

    private String table() {
        return PostgresSyncStorage.q(pgSchema) + "." + PostgresSyncStorage.q("sync_blobs");
    }

    /** The store's table as catalog-checked DDL steps ({@link DdlStep}): none runs on an up-to-date database. */
    List<DdlStep> ddl() {
        return List.of(DdlStep.schema(pgSchema, "CREATE SCHEMA IF NOT EXISTS " + PostgresSyncStorage.q(pgSchema)),
                DdlStep.relation(pgSchema, "sync_blobs", "CREATE TABLE IF NOT EXISTS " + table()
                        + " (partition_id text COLLATE \"C\" NOT NULL,"
                        + " blob_id text COLLATE \"C\" NOT NULL, bytes bytea NOT NULL, byte_length bigint NOT NULL,"
                        + " media_type text, created_at_ms bigint NOT NULL, PRIMARY KEY (partition_id, blob_id))"));
    }

    /** Creates the schema and table when absent (a catalog read only, when present); safe to run concurrently. */
    public Uni<Void> ensureSchema() {
        return PostgresSyncStorage.applyDdl(pool, "syncular.ensureBlobSchema:" + pgSchema, ddl());
    }

    @Override
    public Uni<BlobInfo> put(String partition, BlobContent content, String mediaType, long nowMs) {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(content, "content");
        // a cheap look first: an idempotent re-upload of a large blob never ships its bytes to the database
        return describe(partition, content.blobId()).chain(existing -> existing != null ? Uni.createFrom().item(existing)
                : pool.preparedQuery("INSERT INTO " + table() + " (partition_id, blob_id, bytes, byte_length, media_type,"
                                + " created_at_ms) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (partition_id, blob_id) DO NOTHING")
                        .execute(Tuple.tuple().addValue(partition).addValue(content.blobId())
                                .addValue(io.vertx.core.buffer.Buffer.buffer(content.bytes())).addValue(content.byteLength())
                                .addValue(mediaType).addValue(nowMs))
                        .chain(() -> describe(partition, content.blobId())));
    }

    @Override
    public Uni<BlobInfo> describe(String partition, String blobId) {
        return pool.preparedQuery("SELECT byte_length, media_type, created_at_ms FROM " + table()
                        + " WHERE partition_id = $1 AND blob_id = $2")
                .execute(Tuple.of(partition, blobId))
                .map(rs -> {
                    Row r = first(rs);
                    return r == null ? null : new BlobInfo(partition, blobId, r.getLong(0), r.getString(1), r.getLong(2));
                });
    }

    @Override
    public Uni<Boolean> has(String partition, String blobId) {
        return pool.preparedQuery("SELECT 1 FROM " + table() + " WHERE partition_id = $1 AND blob_id = $2")
                .execute(Tuple.of(partition, blobId))
                .map(rs -> rs.size() > 0);
    }

    @Override
    public Uni<byte[]> read(String partition, String blobId) {
        return pool.preparedQuery("SELECT bytes FROM " + table() + " WHERE partition_id = $1 AND blob_id = $2")
                .execute(Tuple.of(partition, blobId))
                .map(rs -> {
                    Row r = first(rs);
                    return r == null ? null : r.getBuffer(0).getBytes();
                });
    }

    @Override
    public Uni<Boolean> delete(String partition, String blobId) {
        return pool.preparedQuery("DELETE FROM " + table() + " WHERE partition_id = $1 AND blob_id = $2")
                .execute(Tuple.of(partition, blobId))
                .map(rs -> rs.rowCount() > 0);
    }

    @Override
    public Uni<BlobPage> listCreatedBefore(long cutoffMs, String after, int limit) {
        if (limit <= 0) {
            throw new IllegalArgumentException("limit must be positive");
        }
        // the cursor is "partition NUL blobId" (PostgreSQL text never holds NUL)
        BlobKey from = null;
        if (after != null) {
            int sep = after.indexOf('\u0000');
            if (sep < 0) {
                throw new IllegalArgumentException("not a cursor of this store");
            }
            from = new BlobKey(after.substring(0, sep), after.substring(sep + 1));
        }
        String sql = "SELECT partition_id, blob_id, created_at_ms FROM " + table()
                + (from == null ? "" : " WHERE (partition_id, blob_id) > ($2, $3)")
                + " ORDER BY partition_id, blob_id LIMIT $1";
        Tuple args = from == null ? Tuple.of(limit) : Tuple.of(limit, from.partition(), from.blobId());
        return pool.preparedQuery(sql).execute(args).map(rs -> {
            List<BlobKey> matching = new ArrayList<>();
            BlobKey last = null;
            int scanned = 0;
            for (Row r : rs) {
                scanned++;
                last = new BlobKey(r.getString(0), r.getString(1));
                if (r.getLong(2) < cutoffMs) {
                    matching.add(last);
                }
            }
            return new BlobPage(matching, scanned < limit ? null : last.partition() + '\u0000' + last.blobId());
        });
    }

    private static Row first(RowSet<Row> rs) {
        var it = rs.iterator();
        return it.hasNext() ? it.next() : null;
    }
}
