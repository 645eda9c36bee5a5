/**
 * A single-process {@link dev.syncular.server.segments.SegmentStore} for tests and development, with the
 * §5.1 semantics of the durable stores (one entry per content address, publications merged, collisions
 * refused).
 *
 * <p>Depends only on {@code segments} and the JDK.
 */
package dev.syncular.server.segments.memory;
