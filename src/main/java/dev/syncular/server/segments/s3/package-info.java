/**
 * The {@link dev.syncular.server.segments.SegmentStore} on an S3-compatible object store: immutable
 * segment objects and conditionally written publication records (§5.1), and provider-presigned GETs for
 * {@code SEGMENT_REF} URLs (§5.4). Every S3 call goes through the asynchronous client ({@code S3AsyncClient} on the
 * Netty HTTP client) as composed futures: no thread is held while S3 is slow, unreachable or retrying.
 *
 * An outage of S3 (a timeout, a lost connection, a 5xx) fails an operation as the storage's transient refusal
 * ({@code s3.S3Outage}: 429 {@code storage_unavailable} to the round, §10.2).
 *
 * <p>{@code S3SegmentStore} is the store; its parts, one concern each: {@code SegmentObjectKeys} (the deterministic
 * object layout: bytes, record and reuse pointer keys), {@code S3Objects} (the GET/HEAD/PUT/DELETE/LIST calls on
 * the bucket, conditional PUTs included), {@code PublicationRecords} (the record object and its older shape),
 * {@code SegmentUpload} (the publish path: record first, then bytes, then the §5.3 reuse pointer),
 * {@code EntryTurns} (publishers and sweeps of one entry take turns in this process), {@code ExpirySweep} (the
 * expiry sweep and bucket statistics, the only LISTs) and {@code PresignedSegmentUrls} (§5.4 presigning).
 *
 * <p>May depend on {@code segments}, {@code wire} and {@code s3}, plus the AWS SDK; never on {@code storage} itself,
 * {@code sync} or the Quarkus edge ({@code NoExpectContinue} carries only Quarkus's native-image
 * reflection annotation).
 */
package dev.syncular.server.segments.s3;
