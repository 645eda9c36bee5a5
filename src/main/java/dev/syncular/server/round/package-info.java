/**
 * The sync round written once for both of its bindings (§1.1, §8.7 "one handler, two framings"):
 * {@code SyncRound} — bytes in under {@code syncular.max-request-bytes} and the pod's buffer budget
 * ({@code BodyIntake}, per chunk as they arrive; {@code RequestStream} for a request arriving in socket chunks),
 * the request decoded (gzip inflated under the same cap), the authentication deadline, the engine's planned
 * frames, and the response out as chunks of the encoded body ({@code ResponseBody} under the negotiated
 * {@code ContentCoding}, §1.3, §5.8). Failures are mapped once ({@code RoundFailure}: catalogue code, status,
 * details, {@code Retry-After}; a transient storage failure as the storage classifies it, {@code
 * storage.StorageBusy}; {@code HttpError} for a status other than the code's) and rendered as the §10.1
 * JSON body ({@code ErrorBodies}) or in-band as {@code RESP_HEADER, ERROR, END}.
 *
 * <p>Binding-neutral: no route, socket or request object. Above {@code sync} and {@code auth}, below the edge:
 * {@code http} frames it as {@code POST <mount>/sync}, {@code realtime} as {@code 0x01} rounds, and both (and the
 * conformance host) use its error mapping.
 */
package dev.syncular.server.round;
