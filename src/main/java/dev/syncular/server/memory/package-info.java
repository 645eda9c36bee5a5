/**
 * Memory held on behalf of clients, bounded pod-wide: {@code BufferBudget} counts, in bytes, everything the
 * server buffers for a request while it arrives — HTTP request bodies (§1.1), the inflated bytes of gzip bodies
 * (§1.3), socket-round requests (§8.7) — against one budget derived from the heap, and refuses with
 * {@code sync.rate_limited} (§10.2, HTTP 429 with {@code Retry-After}) once it is spent.
 *
 * <p>Part of the Quarkus edge, low: it depends only on {@code config} and the error catalogue, so the HTTP
 * edge and the realtime channel may both use it. It implements no wire format.
 */
package dev.syncular.server.memory;
