/**
 * The embedded {@link dev.syncular.server.segments.SegmentStore} in PostgreSQL over the Vert.x reactive
 * client (§5.1 content-addressed cache entries and their publications).
 *
 * <p>May depend on {@code segments}, {@code wire} and {@code storage.postgres} (its identifier
 * quoting and DDL application); never on {@code sync} or the Quarkus edge. Like every PostgreSQL implementation it
 * ranks just below the composition root: only {@code boot} names its classes.
 */
package dev.syncular.server.segments.postgres;
