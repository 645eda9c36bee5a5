package dev.syncular.server.s3;

import dev.syncular.server.storage.StorageException;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.jboss.logging.Logger;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.core.exception.SdkServiceException;

/**
 * The failures of an S3 call that mean the object store is unavailable, not that the request is wrong: a backend
 * outage is never a 500 (§10.2 "host adapter errors"). Such a failure becomes the storage's transient refusal
 * ({@link StorageException#busy}, reason {@value #REASON}), which the bindings answer 429 {@code sync.rate_limited}
 * with {@code Retry-After} — the answer a refused connection to the database or to S3 gets — so the client retries:
 *
 * <ul>
 *   <li>no answer in time: {@code quarkus.s3.api-call-timeout} or {@code api-call-attempt-timeout} spent, a read or
 *       write timeout, no connection of the client's pool free within its acquisition timeout (more calls in flight
 *       than {@code quarkus.s3.async-client.max-concurrency});</li>
 *   <li>no connection: refused, reset or closed, a host that does not resolve (an I/O failure under the client);</li>
 *   <li>S3 answering 5xx ({@code 503 SlowDown}, {@code 500 InternalError}) or throttling after the SDK's retries.</li>
 * </ul>
 *
 * Anything else is left as it is: a 4xx (403, 404, 412 — the stores act on those), a credentials or signing
 * failure, a local file that cannot be read. Each outage is logged once, at WARN, with a static message and the
 * exception's class (and its cause's, or S3's status): never its message, which may carry a URL.
 */
public final class S3Outage {
    static final String REASON = "storage_unavailable";
    private static final Logger LOG = Logger.getLogger(S3Outage.class);
    private static final int MAX_DEPTH = 8;

    private S3Outage() {}

    /**
     * {@code failure} (or what a {@link CompletionException} wraps) as {@link StorageException#busy} with reason
     * {@value #REASON} when it is an outage, logged once; otherwise {@code failure} unchanged.
     */
    public static Throwable classified(Throwable failure) {
        Throwable t = unwrap(failure);
        if (!isOutage(t)) {
            return failure;
        }
        if (t instanceof SdkServiceException s) {
            LOG.warnf(
                    "S3 call failed (%s, status %d): the object store is unavailable, answered %s (the client retries)",
                    t.getClass().getName(), s.statusCode(), REASON);
        } else {
            Throwable cause = t.getCause();
            LOG.warnf(
                    "S3 call failed (%s, cause %s): the object store is unavailable, answered %s (the client retries)",
                    t.getClass().getName(),
                    cause == null ? "none" : cause.getClass().getName(),
                    REASON);
        }
        return StorageException.busy(REASON, t);
    }

    /** Whether {@code t} (already unwrapped) says the object store is unavailable (see the class comment). */
    static boolean isOutage(Throwable t) {
        if (t instanceof ApiCallTimeoutException || t instanceof ApiCallAttemptTimeoutException) {
            return true;
        }
        if (t instanceof SdkServiceException s) {
            return s.statusCode() >= 500 || s.isThrottlingException();
        }
        return t instanceof SdkClientException && transportFailure(t.getCause());
    }

    /**
     * Whether the cause of a client-side failure is the transport: an I/O failure (refused, reset, closed channel,
     * unresolved host, and the Netty client's "Read timed out" / "Write timed out") or a timeout (the connection
     * acquisition timeout: "Acquire operation took longer than ..."), not a local file.
     */
    private static boolean transportFailure(Throwable cause) {
        for (int depth = 0; cause != null && depth < MAX_DEPTH; depth++, cause = cause.getCause()) {
            if (cause instanceof FileSystemException) {
                return false;
            }
            if (cause instanceof IOException
                    || cause instanceof TimeoutException
                    || cause instanceof io.netty.handler.timeout.TimeoutException) {
                return true;
            }
        }
        return false;
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }
}
