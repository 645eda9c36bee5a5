package dev.syncular.server.s3;

import io.smallrye.mutiny.Uni;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Supplier;

/**
 * One call of the asynchronous S3 client as a {@link Uni}, for both S3 stores: started anew for each subscription;
 * its failure is the SDK's own exception (or the store's), not the {@link CompletionException} that wraps it inside a
 * composition, except an outage of S3, which is the storage's transient refusal ({@link S3Outage}).
 */
public final class S3Call {
    private S3Call() {}

    public static <T> Uni<T> of(Supplier<CompletableFuture<T>> call) {
        return Uni.createFrom()
                .completionStage(() -> {
                    try {
                        return call.get();
                    } catch (RuntimeException e) {
                        return CompletableFuture.failedFuture(e);
                    }
                })
                .onFailure(CompletionException.class)
                .transform(e -> e.getCause() == null ? e : e.getCause())
                .onFailure()
                .transform(S3Outage::classified);
    }
}
