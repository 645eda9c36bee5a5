package dev.syncular.server.blobs.postgres;

import dev.syncular.server.blobs.BlobContent;
import dev.syncular.server.blobs.BlobInfo;
import dev.syncular.server.blobs.BlobKey;
import dev.syncular.server.blobs.BlobPage;
import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.storage.postgres.DdlStep;
import dev.syncular.server.storage.postgres.PostgresStores;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.Executor;

/**
 * The embedded (zero-setup) {@link BlobStore}: blob bytes in PostgreSQL, in the PostgreSQL schema given at
 * construction (the sync storage's, {@code syncular.storage.pg-schema}).
 *
 * <h2>DDL</h2>
 *
 * {@code sync_blobs(partition_id text COLLATE "C", blob_id text COLLATE "C", bytes bytea, byte_length bigint,
 * media_type text NULL, created_at_ms bigint, chunk_bytes integer NULL, PRIMARY KEY (partition_id, blob_id))} —
 * one immutable row per (partition, content address) — and {@code sync_blob_chunks(partition_id, blob_id,
 * chunk_index integer, bytes bytea, PRIMARY KEY (partition_id, blob_id, chunk_index))}, referencing it with
 * {@code ON DELETE CASCADE}. A blob's bytes are its chunks of {@code chunk_bytes} ({@link #READ_CHUNK_BYTES})
 * bytes, stored uncompressed ({@code STORAGE EXTERNAL}: content-addressed uploads are mostly compressed media);
 * {@code bytes} stays empty. A row whose {@code chunk_bytes} is NULL holds its bytes in {@code bytes} (blobs
 * uploaded before chunking), read back in slices. A re-upload is {@code INSERT ... ON CONFLICT DO NOTHING},
 * so the first upload's {@code created_at_ms} stays. The sweep listing walks the primary key.
 *
 * <p>Neither direction holds a blob in memory: an upload is read from its {@link BlobContent#open} stream one
 * chunk at a time (on a worker thread) and inserted chunk by chunk in one transaction; a download queries one
 * chunk whenever its subscriber asks for the next.
 */
public final class PostgresBlobStore implements BlobStore {
    private final Pool pool;
    private final String pgSchema;
    private final Executor worker;

    public PostgresBlobStore(Pool pool, String pgSchema) {
        this.pool = Objects.requireNonNull(pool, "pool");
        this.pgSchema = Objects.requireNonNull(pgSchema, "pgSchema");
        this.worker = Infrastructure.getDefaultWorkerPool();
    }

    public String pgSchema() {
        return pgSchema;
    }

    private String table() {
        return PostgresStores.q(pgSchema) + "." + PostgresStores.q("sync_blobs");
    }

    private String chunks() {
        return PostgresStores.q(pgSchema) + "." + PostgresStores.q("sync_blob_chunks");
    }

    /** The store's tables as catalog-checked DDL steps ({@link DdlStep}): none runs on an up-to-date database. */
    List<DdlStep> ddl() {
        return List.of(
                DdlStep.schema(pgSchema, "CREATE SCHEMA IF NOT EXISTS " + PostgresStores.q(pgSchema)),
                DdlStep.relation(
                        pgSchema,
                        "sync_blobs",
                        "CREATE TABLE IF NOT EXISTS " + table()
                                + " (partition_id text COLLATE \"C\" NOT NULL,"
                                + " blob_id text COLLATE \"C\" NOT NULL, bytes bytea NOT NULL, byte_length bigint NOT NULL,"
                                + " media_type text, created_at_ms bigint NOT NULL, PRIMARY KEY (partition_id, blob_id))"),
                DdlStep.column(
                        pgSchema,
                        "sync_blobs",
                        "chunk_bytes",
                        "ALTER TABLE " + table() + " ADD COLUMN IF NOT EXISTS chunk_bytes integer"),
                DdlStep.relation(
                        pgSchema,
                        "sync_blob_chunks",
                        "CREATE TABLE IF NOT EXISTS " + chunks()
                                + " (partition_id text COLLATE \"C\" NOT NULL,"
                                + " blob_id text COLLATE \"C\" NOT NULL, chunk_index integer NOT NULL, bytes bytea NOT NULL,"
                                + " PRIMARY KEY (partition_id, blob_id, chunk_index), FOREIGN KEY (partition_id, blob_id)"
                                + " REFERENCES " + table() + " (partition_id, blob_id) ON DELETE CASCADE)"),
                DdlStep.externalStorage(pgSchema, "sync_blob_chunks", "bytes"));
    }

    /** Creates the schema and tables when absent (a catalog read only, when present); safe to run concurrently. */
    public Uni<Void> ensureSchema() {
        return PostgresStores.applyDdl(pool, "syncular.ensureBlobSchema:" + pgSchema, ddl());
    }

    @Override
    public Uni<BlobInfo> put(String partition, BlobContent content, String mediaType, long nowMs) {
        Objects.requireNonNull(partition, "partition");
        Objects.requireNonNull(content, "content");
        // a cheap look first: an idempotent re-upload of a large blob never ships its bytes to the database
        return describe(partition, content.blobId())
                .chain(existing -> existing != null
                        ? Uni.createFrom().item(existing)
                        : pool.withTransaction(conn -> conn.preparedQuery(
                                                "INSERT INTO " + table() + " (partition_id, blob_id,"
                                                        + " bytes, byte_length, media_type, created_at_ms, chunk_bytes) VALUES ($1, $2, ''::bytea,"
                                                        + " $3, $4, $5, $6) ON CONFLICT (partition_id, blob_id) DO NOTHING")
                                        .execute(Tuple.tuple()
                                                .addValue(partition)
                                                .addValue(content.blobId())
                                                .addValue(content.byteLength())
                                                .addValue(mediaType)
                                                .addValue(nowMs)
                                                .addValue(READ_CHUNK_BYTES))
                                        // nothing inserted: a concurrent upload of the same bytes holds the row (its
                                        // info stands)
                                        .chain(rs -> rs.rowCount() == 0
                                                ? Uni.createFrom().voidItem()
                                                : writeChunks(conn, partition, content)))
                                .chain(() -> describe(partition, content.blobId())));
    }

    /** The content's chunks, each read from its stream on a worker thread, then inserted. */
    private Uni<Void> writeChunks(SqlConnection conn, String partition, BlobContent content) {
        int count = chunkCount(content.byteLength(), READ_CHUNK_BYTES);
        if (count == 0) {
            return Uni.createFrom().voidItem();
        }
        String insert =
                "INSERT INTO " + chunks() + " (partition_id, blob_id, chunk_index, bytes) VALUES ($1, $2, $3, $4)";
        return blocking(content::open)
                .chain(in -> Multi.createFrom()
                        .range(0, count)
                        .onItem()
                        .transformToUniAndConcatenate(i -> blocking(() -> {
                                    byte[] chunk = in.readNBytes(READ_CHUNK_BYTES);
                                    long expected = Math.min(
                                            READ_CHUNK_BYTES, content.byteLength() - (long) i * READ_CHUNK_BYTES);
                                    if (chunk.length != expected) {
                                        throw new IOException("blob content is shorter than its byte length");
                                    }
                                    return chunk;
                                })
                                .chain(chunk -> conn.preparedQuery(insert)
                                        .execute(Tuple.of(partition, content.blobId(), i, Buffer.buffer(chunk)))))
                        .collect()
                        .last()
                        .replaceWithVoid()
                        .eventually(() -> blocking(() -> {
                            in.close();
                            return null;
                        })));
    }

    static int chunkCount(long byteLength, int chunkBytes) {
        return (int) ((byteLength + chunkBytes - 1) / chunkBytes);
    }

    /** Runs a blocking call (file I/O) on the worker pool; the result returns to the subscriber's Vert.x context. */
    private <T> Uni<T> blocking(Callable<T> call) {
        return Uni.createFrom().deferred(() -> {
            Context context = Vertx.currentContext();
            Uni<T> onWorker = Uni.createFrom()
                    .item(() -> {
                        try {
                            return call.call();
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    })
                    .runSubscriptionOn(worker);
            return context == null ? onWorker : onWorker.emitOn(task -> context.runOnContext(v -> task.run()));
        });
    }

    @Override
    public Uni<BlobInfo> describe(String partition, String blobId) {
        return pool.preparedQuery("SELECT byte_length, media_type, created_at_ms FROM " + table()
                        + " WHERE partition_id = $1 AND blob_id = $2")
                .execute(Tuple.of(partition, blobId))
                .map(rs -> {
                    Row r = first(rs);
                    return r == null
                            ? null
                            : new BlobInfo(partition, blobId, r.getLong(0), r.getString(1), r.getLong(2));
                });
    }

    @Override
    public Uni<Boolean> has(String partition, String blobId) {
        return pool.preparedQuery("SELECT 1 FROM " + table() + " WHERE partition_id = $1 AND blob_id = $2")
                .execute(Tuple.of(partition, blobId))
                .map(rs -> rs.size() > 0);
    }

    /**
     * One query per chunk, issued when the subscriber asks for it; a blob stored before chunking is read in
     * slices of its {@code bytes} column ({@code substring}), so neither kind is ever whole in memory.
     */
    @Override
    public Multi<byte[]> read(String partition, String blobId) {
        return pool.preparedQuery(
                        "SELECT byte_length, chunk_bytes FROM " + table() + " WHERE partition_id = $1 AND blob_id = $2")
                .execute(Tuple.of(partition, blobId))
                .onItem()
                .transformToMulti(rs -> {
                    Row r = first(rs);
                    if (r == null) {
                        return Multi.createFrom().failure(new NoSuchElementException("blob not stored"));
                    }
                    long length = r.getLong(0);
                    Integer chunkBytes = r.getInteger(1);
                    int size = chunkBytes == null ? READ_CHUNK_BYTES : chunkBytes;
                    String sql = chunkBytes != null
                            ? "SELECT bytes FROM " + chunks()
                                    + " WHERE partition_id = $1 AND blob_id = $2 AND chunk_index = $3"
                            : "SELECT substring(bytes FROM $3 * " + size + " + 1 FOR " + size + ") FROM " + table()
                                    + " WHERE partition_id = $1 AND blob_id = $2";
                    return Multi.createFrom()
                            .range(0, chunkCount(length, size))
                            .onItem()
                            .transformToUniAndConcatenate(i -> pool.preparedQuery(sql)
                                    .execute(Tuple.of(partition, blobId, i))
                                    .map(chunk -> {
                                        Row c = first(chunk);
                                        if (c == null) {
                                            throw new NoSuchElementException("blob deleted while read");
                                        }
                                        return c.getBuffer(0).getBytes();
                                    }));
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
