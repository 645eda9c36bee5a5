package dev.syncular.server.round;

import dev.syncular.server.memory.BufferBudget;
import dev.syncular.server.wire.Frame;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.buffer.Buffer;
import java.util.Iterator;
import java.util.List;

/**
 * A round's planned response on its way out (§1.2–§1.4): the content coding chosen for it ({@link ContentCoding#choose}
 * from the request's {@code Accept-Encoding} and the response's estimated size, §1.3 — a socket round's is identity,
 * §8.7), its hold on the pod's buffer budget until it is written (issue 44), and its body as chunks of about
 * {@value ResponseBody#CHUNK_BYTES} bytes ({@link ResponseBody}), encoded and compressed as they are pulled.
 *
 * <p>Threading: compressing a large response is CPU work, so a compressed response of {@link #OFFLOAD_BYTES} or more
 * produces its chunks on the worker pool ({@link #chunks}); a smaller one is cheaper to code in place, on the thread
 * that pulls it, than to hand over. An identity response is always coded in place.
 */
public final class RoundResponse {
    /**
     * A compressed response of about this size or more is coded on a worker thread; at least
     * {@link ContentCoding#ZSTD_FROM_BYTES}, so the size estimate that decides this also chose the coding.
     */
    public static final int OFFLOAD_BYTES = 16 * 1024;

    private final List<Frame> frames;
    private final ContentCoding coding;
    private final long bytes;
    private final BufferBudget.Lease held;

    RoundResponse(List<Frame> frames, String acceptEncoding, BufferBudget budget) {
        this.frames = frames;
        this.bytes = ResponseBody.estimatedBytes(frames, Long.MAX_VALUE);
        this.coding = ContentCoding.choose(acceptEncoding, bytes);
        this.held = budget.hold(bytes);
    }

    /** The coding the body goes out in (HTTP names it in {@code Content-Encoding}). */
    public ContentCoding coding() {
        return coding;
    }

    /**
     * The body's chunks as a stream the binding writes as it pulls them (HTTP): the hold on the budget is given back
     * when the stream terminates; a large compressed body is produced on the worker pool.
     */
    public Multi<Buffer> chunks() {
        Multi<Buffer> chunks = Multi.createFrom()
                .iterable(ResponseBody.of(frames, coding))
                .onTermination()
                .invoke(held::release);
        return coding != ContentCoding.IDENTITY && bytes >= OFFLOAD_BYTES
                ? chunks.runSubscriptionOn(Infrastructure.getDefaultWorkerPool())
                : chunks;
    }

    /**
     * The body's chunks one by one, for a binding that writes each after the previous one was written (the socket);
     * it calls {@link #release} once done. Coded in place: a socket round's response is identity-coded.
     */
    public Iterator<Buffer> iterator() {
        return ResponseBody.of(frames, coding).iterator();
    }

    /** Gives the response's hold on the budget back; idempotent. */
    public void release() {
        held.release();
    }
}
