/**
 * The embedded (zero-setup) {@link dev.syncular.server.blobs.BlobStore}: blob bytes in PostgreSQL, in the
 * sync storage's schema (§5.9.2).
 *
 * <p>May depend on {@code blobs} and {@code storage.postgres}; never on {@code sync} or the Quarkus edge.
 */
package dev.syncular.server.blobs.postgres;
