package dev.syncular.server.round;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.config.LimitsConfig;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.testsupport.MappedConfig;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.MessageEncoder;
import dev.syncular.server.wire.Op;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.PushOperation;
import dev.syncular.server.wire.ReqHeader;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.buffer.Buffer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;

/**
 * What a request holds against the pod's buffer budget while its bytes arrive (§1.4, issue 45): the bytes received
 * (inflated, for gzip) and the decoder's buffer for a partial frame, which for a frame of megabytes is a second copy
 * of it until the frame is decoded. Before the buffer was counted, 16 gzip pushes of a 15 MiB row each took a pod
 * with the chart's 192 MB heap down with {@code OutOfMemoryError} (HostileMemoryIT, CI).
 */
class RequestIntakeTest {
    private static final int MIB = 1024 * 1024;

    private static BufferBudget budget(String bytes) {
        LimitsConfig limits = MappedConfig.mapping(LimitsConfig.class, Map.of("syncular.limits.buffer-budget", bytes));
        return new BufferBudget(limits, new SimpleMeterRegistry());
    }

    private static SyncRound round(BufferBudget budget) {
        return new SyncRound(null, 16L * MIB, budget); // the intake uses the round's cap and budget: no engine
    }

    private static byte[] pushOf(byte[] payload) {
        return MessageEncoder.encode(Message.request(List.of(
                new ReqHeader("client-a", 1, "epoch-1"),
                new PushCommit("c1", List.of(new PushOperation("notes", "r1", Op.UPSERT, null, payload))),
                new PullHeader(0, 0, 0, 3))));
    }

    private static byte[] gzip(byte[] bytes) throws IOException {
        ByteArrayOutputStream gz = new ByteArrayOutputStream();
        try (GZIPOutputStream out = new GZIPOutputStream(gz)) {
            out.write(bytes);
        }
        return gz.toByteArray();
    }

    private static byte[] payload(int bytes) {
        byte[] b = new byte[bytes];
        Arrays.fill(b, (byte) 'x');
        return b;
    }

    @Test
    void aSocketRoundCountsItsPartialFrameBufferAndGivesItBackOnceDecoded() {
        BufferBudget budget = budget("16M");
        SyncRound round = round(budget);
        byte[] payload = payload(3 * MIB);
        byte[] message = pushOf(payload);
        RequestIntake intake = round.streamIntake();
        long peak = 0;
        RequestIntake.Fed fed = RequestIntake.Fed.MORE;
        for (int p = 0; p < message.length; p += 64 * 1024) {
            byte[] chunk = Arrays.copyOfRange(message, p, Math.min(message.length, p + 64 * 1024));
            fed = intake.feed(chunk, 0);
            peak = Math.max(peak, budget.inUse());
        }
        assertEquals(RequestIntake.Fed.COMPLETE, fed);
        assertTrue(peak >= 2L * (payload.length - 64 * 1024), "the partial frame was counted twice: " + peak);
        long afterDecode = budget.inUse();
        assertTrue(
                afterDecode < message.length + 64 * 1024,
                "once decoded, the buffer is given back: " + afterDecode + " for " + message.length + " bytes");
        Message request = intake.request().await().atMost(Duration.ofSeconds(10));
        PushCommit push = (PushCommit) request.frames().get(1);
        assertArrayEquals(payload, push.operations().get(0).payload());
        intake.release();
        assertEquals(0, budget.inUse());
    }

    @Test
    void aSocketRoundWhoseBufferDoesNotFitIsRefusedInBandAndStillFramedToItsEnd() {
        // 3 MiB of bytes fit a 5 MiB budget; the 3 MiB frame's buffer beside them does not
        BufferBudget budget = budget("5M");
        SyncRound round = round(budget);
        byte[] message = pushOf(payload(3 * MIB));
        RequestIntake intake = round.streamIntake();
        RequestIntake.Fed fed = RequestIntake.Fed.MORE;
        for (int p = 0; p < message.length; p += 64 * 1024) {
            fed = intake.feed(Arrays.copyOfRange(message, p, Math.min(message.length, p + 64 * 1024)), 0);
        }
        assertEquals(RequestIntake.Fed.COMPLETE, fed, "the stream's END is still found");
        SyncError refused =
                assertThrows(SyncError.class, () -> intake.request().await().atMost(Duration.ofSeconds(10)));
        assertEquals(ErrorCode.RATE_LIMITED, refused.code());
        intake.release();
        assertEquals(0, budget.inUse());
    }

    @Test
    void aGzipBodyWhoseInflatedFrameAndBufferDoNotFitIsRefusedAtItsEnd() throws IOException {
        BufferBudget budget = budget("5M");
        SyncRound round = round(budget);
        byte[] gz = gzip(pushOf(payload(3 * MIB)));
        RequestIntake intake = round.bodyIntake(gz.length, ContentCoding.GZIP);
        intake.feed(Buffer.buffer(gz));
        SyncError refused =
                assertThrows(SyncError.class, () -> intake.request().await().atMost(Duration.ofSeconds(10)));
        assertEquals(ErrorCode.RATE_LIMITED, refused.code());
        // refused: what it buffered is let go at once, not when the connection lets go of the intake
        assertEquals(0, intake.bufferedBytes());
        assertTrue(budget.inUse() < 64 * 1024, "only the body's own bytes stay counted: " + budget.inUse());
        intake.release();
        assertEquals(0, budget.inUse());
    }

    @Test
    void aGzipBodyThatFitsIsDecodedWhole() throws IOException {
        BufferBudget budget = budget("16M");
        SyncRound round = round(budget);
        byte[] payload = payload(3 * MIB);
        byte[] gz = gzip(pushOf(payload));
        RequestIntake intake = round.bodyIntake(gz.length, ContentCoding.GZIP);
        intake.feed(Buffer.buffer(gz));
        Message request = intake.request().await().atMost(Duration.ofSeconds(10));
        assertArrayEquals(
                payload,
                ((PushCommit) request.frames().get(1)).operations().get(0).payload());
        intake.release();
        assertEquals(0, budget.inUse());
    }
}
