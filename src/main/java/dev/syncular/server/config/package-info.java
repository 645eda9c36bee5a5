/**
 * Server configuration and start-up prerequisites: the {@code syncular.*} configuration mapping (mount
 * path §1.1, limits, schema path, segment §5.1/§5.3/§5.4 and blob §5.9 settings, load limits), the datasource
 * start-up check and the embedded PostgreSQL for the {@code dev} and {@code test} profiles. The bounded connection
 * pool and the read-write host choice, which name Vert.x SQL types, live with the storage that uses them
 * ({@code storage.postgres.BoundedPgPool}, {@code storage.postgres.ReadWriteTarget}).
 *
 * <p>Part of the Quarkus edge; it depends on no other package of this server, so every other edge
 * package may read it. It implements no wire format itself.
 */
package dev.syncular.server.config;
