package dev.syncular.server.http;

import dev.syncular.server.blobs.BlobContent;
import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.round.CappedInputStream;
import dev.syncular.server.round.HttpError;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import io.vertx.core.buffer.Buffer;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * A blob upload's body (§5.9.3) on its way to the store, never whole in the heap: each chunk the request body
 * hands over ({@link RequestBody#stream}) is written to a temporary file on a worker thread and, for an
 * identity body, hashed on the way. A {@code gzip} body is spooled as it arrives and inflated at its end — under
 * the same cap ({@code tooLarge} above it), 400 {@code sync.invalid_request} when it is not valid gzip — into a
 * second file, hashed after decoding. {@link #content} is what the store reads back in chunks; {@link #delete}
 * removes the files once the upload is over.
 */
final class BlobSpool {
    private static final int CHUNK = 64 * 1024;

    private final String blobId;
    private final boolean gzip;
    private final long cap;
    private final Supplier<? extends RuntimeException> tooLarge;
    private final Path received;
    private final OutputStream out;
    private final MessageDigest digest = BlobIds.newDigest();
    private Path inflated;
    private long total;

    private BlobSpool(
            String blobId,
            boolean gzip,
            long cap,
            Supplier<? extends RuntimeException> tooLarge,
            Path received,
            OutputStream out) {
        this.blobId = blobId;
        this.gzip = gzip;
        this.cap = cap;
        this.tooLarge = tooLarge;
        this.received = received;
        this.out = out;
    }

    /** A spool in a fresh temporary file (created on a worker thread). */
    static Uni<BlobSpool> open(String blobId, boolean gzip, long cap, Supplier<? extends RuntimeException> tooLarge) {
        return onWorker(() -> {
            Path file = Files.createTempFile("syncular-blob-", ".upload");
            try {
                return new BlobSpool(blobId, gzip, cap, tooLarge, file, Files.newOutputStream(file));
            } catch (IOException e) {
                Files.deleteIfExists(file);
                throw e;
            }
        });
    }

    /** Writes one chunk as it arrived (hashed unless the body is gzip). */
    Uni<Void> write(Buffer chunk) {
        return onWorker(() -> {
                    byte[] bytes = chunk.getBytes();
                    out.write(bytes);
                    if (!gzip) {
                        digest.update(bytes);
                    }
                    total += bytes.length;
                    return null;
                })
                .replaceWithVoid();
    }

    /** The decoded, hashed body, once all of it arrived. */
    Uni<BlobContent> content() {
        return onWorker(() -> {
            out.close();
            if (!gzip) {
                return BlobContent.spooled(blobId, received, total, digest.digest());
            }
            inflated = Files.createTempFile("syncular-blob-", ".inflated");
            long decoded = 0;
            byte[] chunk = new byte[CHUNK];
            try (InputStream in =
                            new GZIPInputStream(new CappedInputStream(Files.newInputStream(received), cap), CHUNK);
                    OutputStream to = Files.newOutputStream(inflated)) {
                int n;
                while ((n = in.read(chunk)) != -1) {
                    decoded += n;
                    if (decoded > cap) {
                        throw tooLarge.get();
                    }
                    digest.update(chunk, 0, n);
                    to.write(chunk, 0, n);
                }
            } catch (ZipException | EOFException e) {
                throw new HttpError(400, ErrorCode.INVALID_REQUEST, "request body is not valid gzip");
            } catch (CappedInputStream.TooLarge e) {
                throw tooLarge.get();
            }
            return BlobContent.spooled(blobId, inflated, decoded, digest.digest());
        });
    }

    /** Closes and removes the temporary files; a file left behind is harmless. */
    Uni<Void> delete() {
        return onWorker(() -> {
                    try {
                        out.close();
                        Files.deleteIfExists(received);
                        if (inflated != null) {
                            Files.deleteIfExists(inflated);
                        }
                    } catch (IOException ignored) {
                        // a temporary file left behind is harmless
                    }
                    return null;
                })
                .replaceWithVoid();
    }

    /** File work runs on the worker pool, never on the event loop; an I/O failure of ours is a 500. */
    private static <T> Uni<T> onWorker(Callable<T> work) {
        return Uni.createFrom()
                .<T>item(() -> {
                    try {
                        return work.call();
                    } catch (IOException e) {
                        throw new UncheckedIOException("spooling the blob upload failed", e);
                    } catch (RuntimeException e) {
                        throw e;
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                })
                .runSubscriptionOn(Infrastructure.getDefaultWorkerPool());
    }
}
