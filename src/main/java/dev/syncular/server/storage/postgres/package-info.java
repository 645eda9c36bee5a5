/**
 * The PostgreSQL implementation of {@link dev.syncular.server.storage.SyncStorage} over the Vert.x reactive
 * SQL client: {@link dev.syncular.server.storage.postgres.PostgresSyncStorage}, a thin facade over one class
 * per concern, each holding the SQL it runs (statement texts built once per instance):
 *
 * <ul>
 *   <li>{@code StorageSchemaMigration}, {@code TableLayout}, {@code InstalledSchema} — the DDL, its additive
 *       migration and the §2.4 readiness checks (stored and physical layout), the schema-upgrade writer fence
 *       transaction;
 *   <li>{@code PartitionRegistry} — §2.1 partitions, log epochs and their rotation, the partition lock row;
 *   <li>{@code ServeGateReads}, {@code CheckpointStore} — §2.4 serve gate, request entry and exit reads,
 *       backfill checkpoints and the writer fence;
 *   <li>{@code PushQueue}, {@code PushTransaction}, {@code PushReadAhead}, {@code PushResults} — §6.4
 *       per-partition queue and grouped transactions, the commit append (§2.1, §2.2), the group read-ahead of
 *       {@link dev.syncular.server.storage.PushReadHint}, §2.3 idempotency records;
 *   <li>{@code CommitLogReads} — §4.5 commit windows and the §4.7 scope pin;
 *   <li>{@code SnapshotReads} — §4.7 bootstrap pages (and §5.2 rows-segment pages);
 *   <li>{@code ProjectionRows}, {@code RowTable}, {@code StoredScopes} — the row projection, its per-table
 *       statements and codec (§2.2, §2.4), stored scopes (§3.1);
 *   <li>{@code BlobReferenceIndex} — §5.9.4 reference index and §5.9.2/§5.9.6 sweep marks;
 *   <li>{@code ClientRecords} — §4.5 client cursor records (the §4.6 retention input) and the §8.2 ack update;
 *   <li>{@code Pruning} — §4.6 pruning horizon;
 *   <li>{@code PgSql} — identifier quoting, literals, the pipelined-statement join.
 * </ul>
 *
 * <p>§8.2: {@code PushTransaction}'s commit append also issues {@code pg_notify} on the storage schema's commit
 * channel ({@link dev.syncular.server.storage.postgres.PostgresSyncStorage#notificationChannel}), inside the
 * same statement; {@code CommitLogReads} reads a notified commit whole.
 *
 * <p>Only the facade is public (with the static helpers other PostgreSQL stores of the same schema use:
 * {@code q}, {@code applyDdl}, {@code rowTableName}). May depend on {@code storage}, {@code schema},
 * {@code wire}, the Vert.x SQL client (Mutiny bindings, {@code pgclient} for SQLSTATEs), Mutiny and Jackson;
 * never on the engine or the HTTP layer. No reflection, no runtime class loading (native image).
 */
package dev.syncular.server.storage.postgres;
