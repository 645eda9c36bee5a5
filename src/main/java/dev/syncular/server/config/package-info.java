/**
 * Server configuration and start-up prerequisites: the global {@code syncular.*} mapping ({@code SyncularConfig}:
 * the §1.1 mount path, the request body cap, the §2.4 checkpoints this build declares), the request limits every
 * binding shares ({@code LimitsConfig}, {@code syncular.limits.*}), the embedded PostgreSQL's properties (declared in
 * {@code SyncularConfig}), what the features' mappings share ({@code StoreKind}, {@code ScheduleInterval},
 * the constraints {@code SecretKey}, {@code ByteSize} and {@code DurationRange}, and {@code MappingConstraints},
 * which checks the Jakarta constraints of every mapping at start-up), the renamed properties ({@code RenamedProperties},
 * SmallRye's fallback relocation with a deprecation warning), the datasource start-up check and the embedded
 * PostgreSQL for the {@code dev} and {@code test} profiles. The bounded connection pool and the read-write host choice,
 * which name Vert.x SQL types, live with the storage that uses them ({@code storage.postgres.BoundedPgPool},
 * {@code storage.postgres.ReadWriteTarget}). Every
 * other {@code syncular.*} group is mapped by the package that owns the feature (issue 46; docs/CONFIGURATION.md).
 *
 * <p>Part of the Quarkus edge; it depends on no other package of this server, so every other package above
 * {@code wire} may read it. It implements no wire format itself.
 */
package dev.syncular.server.config;
