/**
 * The embedded (zero-setup) {@link dev.syncular.server.blobs.BlobStore}: blob bytes in PostgreSQL, in the
 * sync storage's schema (§5.9.2).
 *
 * <p>May depend on {@code blobs} and {@code storage.postgres}; never on {@code sync} or the Quarkus edge. Like every
 * PostgreSQL implementation it ranks just below the composition root: only {@code boot} names its classes.
 */
package dev.syncular.server.blobs.postgres;
