package dev.syncular.server.round;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.storage.StorageException;
import dev.syncular.server.storage.postgres.PostgresStores;
import dev.syncular.server.wire.ErrorFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.WireException;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * The one failure mapping of both round bindings (§10.1, §10.2, §8.7): each kind of failure keeps its catalogue
 * code, status and details; a transient storage failure is {@code sync.rate_limited}; anything else is an internal
 * error with a static message; the in-band form is {@code RESP_HEADER, ERROR}.
 */
class RoundFailureTest {

    /** The mapping with the PostgreSQL storage's classification of a transient failure (what boot provides). */
    private static RoundFailure failure(Throwable e) {
        return RoundFailure.of(e, PostgresStores::busy);
    }

    @Test
    void aSyncErrorKeepsItsCodeStatusAndDetails() {
        RoundFailure f = failure(new SyncError(ErrorCode.FORBIDDEN, "no", Map.of("table", "notes")));
        assertEquals(ErrorCode.FORBIDDEN, f.code());
        assertEquals(ErrorCode.FORBIDDEN.httpStatus, f.status());
        assertEquals("no", f.message());
        assertEquals(Map.of("table", "notes"), f.details());
        assertFalse(f.retryAfter());
        assertFalse(f.internal());
    }

    @Test
    void rateLimitedAndSchemaNotReadyCarryRetryAfterFromTheirDetails() {
        RoundFailure busy = failure(new SyncError(ErrorCode.RATE_LIMITED, "busy", Map.of("retryAfterMs", 2500)));
        assertTrue(busy.retryAfter());
        assertEquals("3", busy.retryAfterSeconds(), "rounded up to whole seconds");
        RoundFailure notReady = failure(new SyncError(ErrorCode.SCHEMA_NOT_READY, "wait"));
        assertTrue(notReady.retryAfter());
        assertEquals("1", notReady.retryAfterSeconds(), "at least one second");
    }

    @Test
    void anHttpErrorKeepsItsStatusWithoutDetails() {
        RoundFailure f = failure(new HttpError(413, ErrorCode.INVALID_REQUEST, "too large"));
        assertEquals(413, f.status());
        assertEquals(ErrorCode.INVALID_REQUEST, f.code());
        assertEquals(Map.of(), f.details());
    }

    @Test
    void aDecodeErrorKeepsItsCodeOrIsAnInvalidRequest() {
        RoundFailure empty = failure(new WireException(WireException.EMPTY_COMMIT, "empty", Map.of()));
        assertEquals(ErrorCode.EMPTY_COMMIT, empty.code());
        RoundFailure other = failure(new WireException("sync.not_a_catalogue_code", "odd", Map.of("at", 3)));
        assertEquals(ErrorCode.INVALID_REQUEST, other.code());
        assertEquals(400, other.status());
        assertEquals(Map.of("at", 3), other.details());
    }

    @Test
    void aBusyStorageIsRateLimitedWithItsReason() {
        StorageException busy = new StorageException(
                StorageException.BUSY, "storage is busy", Map.of("reason", "lock_timeout", "retryAfterMs", 1000L));
        RoundFailure f = failure(new CompletionException(busy));
        assertEquals(ErrorCode.RATE_LIMITED, f.code());
        assertEquals(429, f.status());
        assertEquals("lock_timeout", f.details().get("reason"));
        assertTrue(f.retryAfter());
    }

    /**
     * The database going away under a failover or restart (issue 44) is transient too: the client retries the same
     * round (a commit that landed before the connection closed answers from its §2.3 record).
     */
    @Test
    void aFailoverInProgressIsRateLimitedWithItsReason() {
        Map<Throwable, String> reasons = new LinkedHashMap<>();
        reasons.put(new ConnectException("Connection refused"), "storage_unavailable");
        reasons.put(new SocketException("Connection reset"), "storage_unavailable");
        reasons.put(new IOException("Broken pipe"), "storage_unavailable");
        reasons.put(new IllegalStateException(new SocketException("Connection reset")), "storage_unavailable");
        reasons.put(
                new IllegalStateException("Connection is not active now, current status: CLOSED"),
                "storage_unavailable");
        reasons.put(ClosedConnectionException.INSTANCE, "storage_unavailable");
        reasons.put(
                new PgException("terminating connection due to administrator command", "FATAL", "57P01", null),
                "storage_unavailable");
        reasons.put(
                new PgException("the database system is starting up", "FATAL", "57P03", null), "storage_unavailable");
        reasons.put(
                new PgException("cannot execute INSERT in a read-only transaction", "ERROR", "25006", null),
                "read_only");
        reasons.forEach((failure, reason) -> {
            RoundFailure f = failure(new CompletionException(failure));
            assertEquals(ErrorCode.RATE_LIMITED, f.code(), failure.toString());
            assertEquals(reason, f.details().get("reason"), failure.toString());
            assertEquals("1", f.retryAfterSeconds());
        });
    }

    @Test
    void anythingElseIsAnInternalErrorWithAStaticMessage() {
        RoundFailure f = failure(new IllegalStateException("secret-token-abc leaked into a message"));
        assertTrue(f.internal());
        assertEquals(ErrorCode.INTERNAL_ERROR, f.code());
        assertEquals(500, f.status());
        assertEquals("internal server error", f.message());
    }

    @Test
    void theInBandFormIsARespHeaderAndAnError() {
        List<Frame> frames = SyncRound.failed(failure(new SyncError(ErrorCode.AUTH_REQUIRED, "who")), "epoch-1");
        assertEquals(2, frames.size());
        RespHeader header = assertInstanceOf(RespHeader.class, frames.get(0));
        assertEquals("epoch-1", header.logEpoch());
        ErrorFrame error = assertInstanceOf(ErrorFrame.class, frames.get(1));
        assertEquals(ErrorCode.AUTH_REQUIRED.code, error.code());
        assertEquals("who", error.message());
    }
}
