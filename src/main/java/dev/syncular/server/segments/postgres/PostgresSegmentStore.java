package dev.syncular.server.segments.postgres;

import dev.syncular.server.segments.SegmentCollisionException;
import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentStoreStats;
import dev.syncular.server.segments.StoredSegment;
import dev.syncular.server.storage.postgres.DdlStep;
import dev.syncular.server.storage.postgres.PostgresStores;
import dev.syncular.server.wire.MediaType;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.buffer.Buffer;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Objects;

/**
 * {@link SegmentStore} over the Vert.x reactive PostgreSQL client (§5.1). Every object lives in the
 * PostgreSQL schema (namespace) given at construction; identifiers are quoted and qualified.
 *
 * <h2>DDL</h2>
 *
 * <ul>
 *   <li>{@code sync_segments(segment_id text PK, bytes bytea, byte_length bigint, created_at_ms bigint,
 *       sha256 bytea)} — one immutable entry per content address, with the SHA-256 of its bytes computed at
 *       insert (entries written before the column existed have none: PostgreSQL hashes their bytes on demand);
 *   <li>{@code sync_segment_publications(pub_seq identity PK, segment_id, partition_id, log_epoch, tbl,
 *       schema_version, media_type smallint, scope_digest, as_of_commit_seq, row_cursor, next_row_cursor,
 *       row_count, created_at_ms, expires_at_ms)} with a unique index over the publication context
 *       ({@code segment_id} plus everything {@link SegmentPublication#sameContext} compares; the nullable
 *       cursors through {@code COALESCE('v' || cursor, 'n')} so {@code null} and {@code ""} stay distinct)
 *       and an index on {@code expires_at_ms} for {@link #deleteExpired}.
 * </ul>
 *
 * <h2>Concurrency</h2>
 *
 * {@link #publish} runs in one transaction: it takes a {@code FOR SHARE} lock on the stored entry and
 * compares its length and SHA-256 with the published bytes (a mismatch is a
 * {@link SegmentCollisionException}; the transaction rolls back, nothing changes), or inserts the entry
 * with {@code ON CONFLICT DO NOTHING} when absent (re-reading when a concurrent publisher won the
 * insert). The publication is then an atomic {@code INSERT ... ON CONFLICT (context) DO UPDATE SET
 * expires_at_ms = GREATEST(...)}: concurrent publishers of one context merge into its lifetime (never
 * shortening it) and new contexts append, so no publication is lost. {@link #deleteExpired} locks the
 * candidate entries {@code FOR UPDATE SKIP LOCKED} and re-checks them under a fresh snapshot before
 * deleting, so an entry a publisher is adding a publication to is never forgotten underneath it.
 */
public final class PostgresSegmentStore implements SegmentStore {
    private static final int MAX_ATTEMPTS = 8;
    private static final String PUB_COLS = "partition_id, log_epoch, tbl, schema_version, media_type, scope_digest,"
            + " as_of_commit_seq, row_cursor, next_row_cursor, row_count, created_at_ms, expires_at_ms";
    private static final String CONTEXT_KEY = "segment_id, partition_id, log_epoch, tbl, schema_version, media_type,"
            + " scope_digest, as_of_commit_seq, (COALESCE('v' || row_cursor, 'n')),"
            + " (COALESCE('v' || next_row_cursor, 'n'))";

    /**
     * Default {@link #maxSegmentBytes()}: a segment is one {@code bytea} value, held whole in memory (several
     * copies while it is written), so large SQLite images belong in S3 (docs/SEGMENTS.md).
     */
    public static final long DEFAULT_MAX_SEGMENT_BYTES = 16L << 20;

    /** Largest default bound of the in-memory cache of recently published or read segment bytes. */
    public static final long DEFAULT_CACHE_BYTES = 64L << 20;

    /**
     * The cache bound for a heap of {@code maxHeapBytes}: an eighth of it, at most {@link #DEFAULT_CACHE_BYTES}.
     * Cached segments are long-lived, so they sit in the old generation; with the chart's 192 MiB heap (96 MiB of
     * old generation, a third of it the server's own baseline) a 64 MiB cache full of distinct segments would leave
     * no room for what young collections promote, and every collection would be a full one.
     */
    public static long defaultCacheBytes(long maxHeapBytes) {
        return Math.max(0, Math.min(DEFAULT_CACHE_BYTES, maxHeapBytes / 8));
    }

    /** {@link #defaultCacheBytes(long)} for this JVM's maximum heap. */
    public static long defaultCacheBytes() {
        return defaultCacheBytes(Runtime.getRuntime().maxMemory());
    }

    private final Pool pool;
    private final String pgSchema;
    private final long cacheBytes;
    /**
     * Recently published/read bytes by content address, LRU, at most {@link #cacheBytes} in total: a download
     * right after its publish does not read the blob back from PostgreSQL. Entries are immutable (the id is
     * the SHA-256 of the bytes); {@link #deleteExpired} evicts what it deletes.
     */
    private final LinkedHashMap<String, byte[]> cache = new LinkedHashMap<>(16, 0.75f, true);

    private long cachedBytes;

    /**
     * @param pool       the reactive pool
     * @param pgSchema   the PostgreSQL schema (namespace) holding the segment tables; created if absent
     * @param cacheBytes bound of the in-memory byte cache (0 disables it; {@link #defaultCacheBytes})
     */
    public PostgresSegmentStore(Pool pool, String pgSchema, long cacheBytes) {
        this.pool = Objects.requireNonNull(pool, "pool");
        this.pgSchema = Objects.requireNonNull(pgSchema, "pgSchema");
        this.cacheBytes = Math.max(0, cacheBytes);
    }

    private synchronized void cachePut(String segmentId, byte[] bytes) {
        if (bytes.length > cacheBytes) {
            return;
        }
        byte[] old = cache.put(segmentId, bytes);
        if (old != null) {
            cachedBytes -= old.length;
        }
        cachedBytes += bytes.length;
        var it = cache.entrySet().iterator();
        while (cachedBytes > cacheBytes && it.hasNext()) {
            cachedBytes -= it.next().getValue().length;
            it.remove();
        }
    }

    private synchronized byte[] cacheGet(String segmentId) {
        return cache.get(segmentId);
    }

    private synchronized void cacheRemove(String segmentId) {
        byte[] old = cache.remove(segmentId);
        if (old != null) {
            cachedBytes -= old.length;
        }
    }

    @Override
    public long maxSegmentBytes() {
        return DEFAULT_MAX_SEGMENT_BYTES;
    }

    public String pgSchema() {
        return pgSchema;
    }

    /** The qualified, quoted name of a storage object. */
    public String qualified(String name) {
        return q(pgSchema) + "." + q(name);
    }

    private static String q(String ident) {
        return PostgresStores.q(ident);
    }

    private String t(String name) {
        return qualified(name);
    }

    // ------------------------------------------------------------------------------------------------
    // ensureSchema
    // ------------------------------------------------------------------------------------------------

    /** The store's tables as catalog-checked DDL steps ({@link DdlStep}): none runs on an up-to-date database. */
    List<DdlStep> ddl() {
        return List.of(
                DdlStep.schema(pgSchema, "CREATE SCHEMA IF NOT EXISTS " + q(pgSchema)),
                DdlStep.relation(
                        pgSchema,
                        "sync_segments",
                        "CREATE TABLE IF NOT EXISTS " + t("sync_segments")
                                + " (segment_id text PRIMARY KEY, bytes bytea NOT NULL, byte_length bigint NOT NULL,"
                                + " created_at_ms bigint NOT NULL, sha256 bytea)"),
                DdlStep.column(
                        pgSchema,
                        "sync_segments",
                        "sha256",
                        "ALTER TABLE " + t("sync_segments") + " ADD COLUMN IF NOT EXISTS sha256 bytea"),
                DdlStep.relation(
                        pgSchema,
                        "sync_segment_publications",
                        "CREATE TABLE IF NOT EXISTS "
                                + t("sync_segment_publications")
                                + " (pub_seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, segment_id text NOT NULL,"
                                + " partition_id text NOT NULL, log_epoch text NOT NULL, tbl text NOT NULL,"
                                + " schema_version integer NOT NULL, media_type smallint NOT NULL,"
                                + " scope_digest text NOT NULL, as_of_commit_seq bigint NOT NULL, row_cursor text,"
                                + " next_row_cursor text, row_count bigint NOT NULL, created_at_ms bigint NOT NULL,"
                                + " expires_at_ms bigint NOT NULL)"),
                DdlStep.relation(
                        pgSchema,
                        "sync_segment_publications_ctx",
                        "CREATE UNIQUE INDEX IF NOT EXISTS" + " sync_segment_publications_ctx ON "
                                + t("sync_segment_publications") + " (" + CONTEXT_KEY + ")"),
                DdlStep.relation(
                        pgSchema,
                        "sync_segment_publications_expiry",
                        "CREATE INDEX IF NOT EXISTS" + " sync_segment_publications_expiry ON "
                                + t("sync_segment_publications") + " (expires_at_ms)"));
    }

    /** Creates the schema and tables when absent (a catalog read only, when present); safe to run concurrently. */
    public Uni<Void> ensureSchema() {
        return PostgresStores.applyDdl(pool, "syncular.ensureSegmentSchema:" + pgSchema, ddl());
    }

    // ------------------------------------------------------------------------------------------------
    // publish
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<Void> publish(String segmentId, byte[] bytes, SegmentPublication publication) {
        Objects.requireNonNull(segmentId, "segmentId");
        Objects.requireNonNull(bytes, "bytes");
        Objects.requireNonNull(publication, "publication");
        // the caller hands over the array (and does not change it afterwards): cached as is, no copy. Hashed
        // once, on a worker thread (never the event loop): stored with a new entry, compared with an existing
        // one's stored hash (so republishing never reads the stored bytes back).
        return Uni.createFrom()
                .item(() -> sha256(bytes))
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                .chain(digest -> PostgresStores.readCommitted(
                        pool,
                        conn -> ensureEntry(conn, segmentId, bytes, digest, 1)
                                .chain(() -> upsertPublication(conn, segmentId, publication))))
                .invoke(() -> cachePut(segmentId, bytes));
    }

    /**
     * Leaves a {@code FOR SHARE}-locked (or freshly inserted) entry holding exactly {@code bytes}, or fails
     * with {@link SegmentCollisionException}.
     */
    private Uni<Void> ensureEntry(SqlConnection conn, String segmentId, byte[] bytes, byte[] digest, int attempt) {
        return conn.preparedQuery("SELECT byte_length, COALESCE(sha256, sha256(bytes)) FROM " + t("sync_segments")
                        + " WHERE segment_id = $1 FOR SHARE")
                .execute(Tuple.of(segmentId))
                .chain(rs -> {
                    Row row = first(rs);
                    if (row != null) {
                        if (row.getLong(0) != bytes.length
                                || !Arrays.equals(row.getBuffer(1).getBytes(), digest)) {
                            return Uni.createFrom().failure(new SegmentCollisionException());
                        }
                        return Uni.createFrom().voidItem();
                    }
                    return conn.preparedQuery("INSERT INTO " + t("sync_segments")
                                    + " (segment_id, bytes, byte_length, created_at_ms, sha256) VALUES ($1, $2, $3, $4, $5)"
                                    + " ON CONFLICT (segment_id) DO NOTHING RETURNING segment_id")
                            .execute(Tuple.of(
                                    segmentId,
                                    Buffer.buffer(bytes),
                                    (long) bytes.length,
                                    System.currentTimeMillis(),
                                    Buffer.buffer(digest)))
                            .chain(ins -> {
                                if (ins.rowCount() > 0) {
                                    return Uni.createFrom().voidItem();
                                }
                                // a concurrent publisher inserted it first (or a concurrent delete raced):
                                // read again under the lock
                                if (attempt >= MAX_ATTEMPTS) {
                                    return Uni.createFrom()
                                            .failure(new IllegalStateException(
                                                    "segment entry kept changing concurrently: " + segmentId));
                                }
                                return ensureEntry(conn, segmentId, bytes, digest, attempt + 1);
                            });
                });
    }

    private Uni<Void> upsertPublication(SqlConnection conn, String segmentId, SegmentPublication p) {
        Tuple args = Tuple.tuple()
                .addValue(segmentId)
                .addValue(p.partition())
                .addValue(p.logEpoch())
                .addValue(p.table())
                .addValue(p.schemaVersion())
                .addValue((short) p.mediaType().code)
                .addValue(p.scopeDigest())
                .addValue(p.asOfCommitSeq())
                .addValue(p.rowCursor())
                .addValue(p.nextRowCursor())
                .addValue(p.rowCount())
                .addValue(p.createdAtMs())
                .addValue(p.expiresAtMs());
        return conn.preparedQuery("INSERT INTO " + t("sync_segment_publications") + " AS p (segment_id, " + PUB_COLS
                        + ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
                        + " ON CONFLICT (" + CONTEXT_KEY + ") DO UPDATE"
                        + " SET expires_at_ms = GREATEST(p.expires_at_ms, EXCLUDED.expires_at_ms)")
                .execute(args)
                .replaceWithVoid();
    }

    // ------------------------------------------------------------------------------------------------
    // reads
    // ------------------------------------------------------------------------------------------------

    @Override
    public Uni<StoredSegment> describe(String segmentId) {
        Objects.requireNonNull(segmentId, "segmentId");
        // one statement, one snapshot: the entry and its publications are mutually consistent
        return pool.preparedQuery("SELECT s.byte_length, p.partition_id, p.log_epoch, p.tbl, p.schema_version,"
                        + " p.media_type, p.scope_digest, p.as_of_commit_seq, p.row_cursor, p.next_row_cursor,"
                        + " p.row_count, p.created_at_ms, p.expires_at_ms FROM " + t("sync_segments") + " s"
                        + " LEFT JOIN " + t("sync_segment_publications") + " p ON p.segment_id = s.segment_id"
                        + " WHERE s.segment_id = $1 ORDER BY p.pub_seq")
                .execute(Tuple.of(segmentId))
                .map(rs -> {
                    long length = -1;
                    List<SegmentPublication> pubs = new ArrayList<>();
                    for (Row r : rs) {
                        length = r.getLong(0);
                        if (r.getValue(1) != null) {
                            pubs.add(new SegmentPublication(
                                    r.getString(1),
                                    r.getString(2),
                                    r.getString(3),
                                    r.getInteger(4),
                                    MediaType.of(r.getShort(5)),
                                    r.getString(6),
                                    r.getLong(7),
                                    r.getString(8),
                                    r.getString(9),
                                    r.getLong(10),
                                    r.getLong(11),
                                    r.getLong(12)));
                        }
                    }
                    return length < 0 ? null : new StoredSegment(segmentId, length, pubs);
                });
    }

    @Override
    public Uni<Match> find(ReuseKey key, long nowMs) {
        return pool.preparedQuery(
                        "SELECT p.segment_id, s.byte_length, p.row_count, p.created_at_ms, p.expires_at_ms FROM "
                                + t("sync_segment_publications") + " p JOIN " + t("sync_segments")
                                + " s ON s.segment_id = p.segment_id"
                                + " WHERE p.partition_id = $1 AND p.log_epoch = $2 AND p.tbl = $3 AND p.schema_version = $4"
                                + " AND p.media_type = $5 AND p.scope_digest = $6 AND p.as_of_commit_seq = $7"
                                + " AND p.row_cursor IS NULL AND p.next_row_cursor IS NULL AND p.expires_at_ms > $8"
                                + " ORDER BY p.expires_at_ms DESC LIMIT 1")
                .execute(Tuple.tuple()
                        .addValue(key.partition())
                        .addValue(key.logEpoch())
                        .addValue(key.table())
                        .addValue(key.schemaVersion())
                        .addValue((short) key.mediaType().code)
                        .addValue(key.scopeDigest())
                        .addValue(key.asOfCommitSeq())
                        .addValue(nowMs))
                .map(rs -> {
                    Row r = first(rs);
                    return r == null
                            ? null
                            : new Match(
                                    r.getString(0),
                                    r.getLong(1),
                                    new SegmentPublication(
                                            key.partition(),
                                            key.logEpoch(),
                                            key.table(),
                                            key.schemaVersion(),
                                            key.mediaType(),
                                            key.scopeDigest(),
                                            key.asOfCommitSeq(),
                                            null,
                                            null,
                                            r.getLong(2),
                                            r.getLong(3),
                                            r.getLong(4)));
                });
    }

    @Override
    public Uni<byte[]> read(String segmentId) {
        Objects.requireNonNull(segmentId, "segmentId");
        byte[] cached = cacheGet(segmentId);
        if (cached != null) {
            return Uni.createFrom().item(cached); // immutable by contract: callers only write it out
        }
        return pool.preparedQuery("SELECT bytes FROM " + t("sync_segments") + " WHERE segment_id = $1")
                .execute(Tuple.of(segmentId))
                .map(rs -> {
                    Row r = first(rs);
                    if (r == null) {
                        return null;
                    }
                    byte[] bytes = r.getBuffer(0).getBytes();
                    cachePut(segmentId, bytes);
                    return bytes;
                });
    }

    /** One statement: entries and their bytes, publications and the unexpired ones. */
    @Override
    public Uni<SegmentStoreStats> stats(long nowMs) {
        return pool.preparedQuery("SELECT (SELECT count(*) FROM " + t("sync_segments") + "), (SELECT COALESCE(sum("
                        + "byte_length), 0)::bigint FROM " + t("sync_segments") + "), count(*), count(*) FILTER (WHERE"
                        + " expires_at_ms > $1) FROM " + t("sync_segment_publications"))
                .execute(Tuple.of(nowMs))
                .map(rs -> {
                    Row r = rs.iterator().next();
                    return new SegmentStoreStats("postgres", r.getLong(0), r.getLong(1), r.getLong(2), r.getLong(3));
                });
    }

    // ------------------------------------------------------------------------------------------------
    // deleteExpired
    // ------------------------------------------------------------------------------------------------

    /**
     * Deletes every publication that expired before {@code nowMs}, then forgets the entries left without
     * any publication; returns how many entries were forgotten. Entries a concurrent publisher holds are
     * skipped (a later sweep takes them if they stay unpublished).
     */
    @Override
    public Uni<Integer> deleteExpired(long nowMs) {
        String pubs = t("sync_segment_publications");
        String segs = t("sync_segments");
        return PostgresStores.readCommitted(
                pool,
                conn -> conn.preparedQuery("DELETE FROM " + pubs + " WHERE expires_at_ms < $1")
                        .execute(Tuple.of(nowMs))
                        .chain(() -> conn.query("SELECT s.segment_id FROM " + segs
                                        + " s WHERE NOT EXISTS (SELECT 1 FROM " + pubs
                                        + " p WHERE p.segment_id = s.segment_id) FOR UPDATE OF s SKIP LOCKED")
                                .execute())
                        .chain(rs -> {
                            List<String> ids = new ArrayList<>();
                            for (Row r : rs) {
                                ids.add(r.getString(0));
                            }
                            if (ids.isEmpty()) {
                                return Uni.createFrom().item(0);
                            }
                            // a new statement, a fresh snapshot: a publication committed since the candidate scan
                            // (its publisher released the lock before we took it) keeps its entry
                            return conn.preparedQuery("DELETE FROM " + segs + " s WHERE s.segment_id = ANY($1)"
                                            + " AND NOT EXISTS (SELECT 1 FROM " + pubs
                                            + " p WHERE p.segment_id = s.segment_id)"
                                            + " RETURNING s.segment_id")
                                    .execute(Tuple.of(ids.toArray(new String[0])))
                                    .map(deleted -> {
                                        for (Row d : deleted) {
                                            cacheRemove(d.getString(0));
                                        }
                                        return deleted.rowCount();
                                    });
                        }));
    }

    // ------------------------------------------------------------------------------------------------

    private static Row first(RowSet<Row> rs) {
        var it = rs.iterator();
        return it.hasNext() ? it.next() : null;
    }

    private static byte[] sha256(byte[] bytes) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(bytes);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
