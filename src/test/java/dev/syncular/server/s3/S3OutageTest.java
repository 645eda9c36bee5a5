package dev.syncular.server.s3;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.syncular.server.round.RoundFailure;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.postgres.PostgresStores;
import io.netty.handler.timeout.ReadTimeoutException;
import java.io.IOException;
import java.net.ConnectException;
import java.nio.file.NoSuchFileException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.core.exception.ApiCallAttemptTimeoutException;
import software.amazon.awssdk.core.exception.ApiCallTimeoutException;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.s3.model.S3Exception;

/**
 * Which S3 failures are an outage (§10.2 "host adapter errors"): each becomes the storage's transient refusal with
 * reason {@code storage_unavailable}, answered exactly as a refused connection is (429 {@code sync.rate_limited},
 * {@code Retry-After: 1}); a request S3 refuses (4xx) or a local failure is left as it is. The failures are the
 * shapes the SDK and its Netty client build (the end-to-end cases are S3StuckCallsTest and S3OutageAnswersTest).
 */
class S3OutageTest {

    /** The mapping with the PostgreSQL storage's classification of a transient failure (what boot provides). */
    private static RoundFailure failure(Throwable e) {
        return RoundFailure.of(e, PostgresStores::busy);
    }

    private static SdkClientException client(String message, Throwable cause) {
        return SdkClientException.builder().message(message).cause(cause).build();
    }

    private static S3Exception status(int status) {
        return (S3Exception) S3Exception.builder()
                .statusCode(status)
                .message("status " + status)
                .build();
    }

    @Test
    void timeoutsLostConnectionsAnd5xxAreAnsweredAsARefusedConnectionIs() {
        // what a refused connection is answered (the database's or S3's), the mapping both bindings share
        RoundFailure refused = failure(new ConnectException("Connection refused"));
        Map<String, Throwable> outages = new LinkedHashMap<>();
        outages.put(
                "api call timeout",
                ApiCallTimeoutException.builder().message("api call timeout").build());
        outages.put(
                "attempt timeout",
                ApiCallAttemptTimeoutException.builder()
                        .message("attempt timeout")
                        .build());
        outages.put(
                "connection acquisition timeout",
                client(
                        "Unable to execute HTTP request: Acquire operation took longer than the configured maximum",
                        new Throwable(
                                "Acquire operation took longer than the configured maximum time",
                                new TimeoutException("Acquire operation took longer than 10000 milliseconds."))));
        outages.put(
                "read timeout",
                client(
                        "Unable to execute HTTP request",
                        new IOException("Read timed out", ReadTimeoutException.INSTANCE)));
        outages.put("write timeout", client("Unable to execute HTTP request", new IOException("Write timed out")));
        outages.put("refused", client("Unable to execute HTTP request", new ConnectException("Connection refused")));
        outages.put("503 SlowDown", status(503));
        outages.put("500 InternalError", status(500));
        outages.forEach((what, failure) -> {
            Throwable classified = S3Outage.classified(new CompletionException(failure));
            StorageException busy = assertInstanceOf(StorageException.class, classified, what);
            assertEquals(StorageException.BUSY, busy.code(), what);
            assertEquals(Map.of("reason", "storage_unavailable", "retryAfterMs", 1000L), busy.details(), what);
            assertSame(failure, busy.getCause(), what);
            assertEquals(refused, failure(classified), what);
        });
    }

    @Test
    void aRefusedRequestOrALocalFailureIsLeftAsItIs() {
        for (Throwable failure : List.of(
                status(403),
                status(404),
                status(412),
                client("Unable to load credentials from any of the providers", null),
                client("Unable to execute HTTP request", new NoSuchFileException("/tmp/spool")),
                new IllegalStateException("corrupt segment record object"))) {
            assertSame(failure, S3Outage.classified(failure), failure.toString());
        }
    }
}
