/**
 * The HTTP transport binding on Quarkus REST (§1.1): {@code POST <mount>/sync} — the HTTP framing of the round
 * handler in {@code round} ({@code SyncResource}: route, content type, authentication, status, headers; the body's
 * chunks handed to the round's intake as they are read, the response's chunks written back — the cap, decoding,
 * content codings, worker hand-offs, error mapping and response chunks are the round's); the direct segment download with re-authorization (§5.5); the blob routes (§5.9.3, §5.9.5); the
 * admin API under {@code <mount>/admin} ({@code AdminResource}: partitions, client records, row inspection,
 * pruning now, segment store statistics, the event tail, the §2.1 log-epoch rotation after a restore and §7.3.4
 * lease revocation; {@code AdminCheckpointsResource}: backfill
 * checkpoints, §2.4), every route behind {@code AdminAccess} (bearer token, audit line) and described in the
 * OpenAPI document at {@code /q/openapi} (management port); the request id of every request ({@code RequestIds}: the
 * {@code X-Request-Id} header and the logging MDC); the §10.1 JSON error answers ({@code ErrorMapper}, over
 * {@code round}'s one mapping), after which an unread request body is discarded and its connection closed
 * ({@code UnreadBodies}); and the CDI beans of the
 * engine, the pod's realtime hub and channel, the blob service (each assembled by the composition root,
 * {@code boot}), the storage and stores from configuration, including the §5.10.2 CRDT merger registry (the built-in
 * {@code yjs-doc} merger plus every {@code CrdtTypeMerger} CDI bean) that the served schema is compiled against.
 * No route lets the framework read its body: each checks its
 * headers and authenticates first, then reads under its own cap through the one body reader
 * ({@code RequestBody}, with the slow-body limits: held in memory, handed on chunk by chunk — a blob upload is
 * spooled to a file — or fed to a sync round's intake);
 * blob bodies stream to and from the store.
 *
 * <p>Part of the Quarkus edge, on top: it may depend on every lower package ({@code wire}, {@code schema},
 * the error catalogue, {@code storage}, {@code segments}, {@code blobs}, {@code sync}, {@code crdt.yjs}, {@code round},
 * {@code realtime}, {@code boot}) and on its edge peers {@code auth}, {@code config} and {@code ops}; nothing below
 * depends on it.
 */
package dev.syncular.server.http;
