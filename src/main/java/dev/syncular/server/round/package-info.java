/**
 * The sync round written once for both of its bindings (§1.1, §8.7 "one handler, two framings"), so a round's bytes
 * take one way whatever brings them. {@code SyncRound} — the authentication deadline, the actor's round places, the
 * engine's planned frames, failures mapped once — with:
 *
 * <ul>
 *   <li>{@code RequestIntake}: the one intake of a round's request, fed chunk by chunk by either binding (the HTTP
 *       body's chunks as they are read, the socket's {@code 0x01} payloads): each counted under
 *       {@code syncular.max-request-bytes} and the pod's buffer budget ({@code BodyIntake}, also the byte counter of
 *       the other routes' bodies), a gzip body inflated as it arrives under the same cap ({@code GzipInflation},
 *       §1.3), and decoded by the streaming request decoder — a small request on the binding's event loop, a large or
 *       gzip HTTP body on the worker pool;</li>
 *   <li>{@code RoundResponse}: the response's content coding negotiated from {@code Accept-Encoding}
 *       ({@code ContentCoding}, §1.3, §5.8; identity on the socket), its hold on the buffer budget until written, and
 *       its chunks ({@code ResponseBody}), a large compressed response produced on the worker pool;</li>
 *   <li>{@code RoundFailure}: catalogue code, status, details, {@code Retry-After} ({@code HttpError} for a status
 *       other than the code's), rendered as the §10.1 JSON body ({@code ErrorBodies}) or in-band as
 *       {@code RESP_HEADER, ERROR, END}; a transient storage failure as the storage classifies it
 *       ({@code storage.StorageBusy}).</li>
 * </ul>
 *
 * <p>Binding-neutral: no route, socket or request object. Above {@code sync} and {@code auth}, below the edge:
 * {@code http} frames it as {@code POST <mount>/sync} (route, authentication, headers and status; the body's chunks
 * in, the response's chunks out), {@code realtime} as {@code 0x01} rounds, and both (and the conformance host) use its
 * error mapping.
 */
package dev.syncular.server.round;
