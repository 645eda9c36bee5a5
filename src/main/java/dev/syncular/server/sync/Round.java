package dev.syncular.server.sync;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.wire.ReqHeader;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Per-request state of one round (§1.5/§1.6): the memoized scope resolution of §3.2 rule 3 and the
 * client's schema (§9), shared by its pushes (§6) and its pull (§4).
 */
final class Round {
    final SyncRequestContext ctx;
    final ReqHeader header;
    final CompiledSchema clientSchema;
    final Uni<Optional<Map<String, List<String>>>> allowed;
    /** The highest commit sequence this request's pushes applied or replayed. */
    long lastCommitSeq;
    /** Rows of this request's inline rows segments (§5.7), told to the {@link SyncObserver} on release. */
    long inlineRows;
    /** §5.9.6: the blob existence check of the commit being applied. */
    BlobPresence blobs = BlobPresence.NONE;

    Round(SyncRequestContext ctx, ReqHeader header, CompiledSchema clientSchema, ScopeResolver resolver,
            SchemaWindow window) {
        this.ctx = ctx;
        this.header = header;
        this.clientSchema = clientSchema;
        this.allowed = resolveOnce(resolver, window, ctx);
    }

    /**
     * §3.2 rule 3: called at most once per request and memoized. A resolver failure is an empty result
     * (pulls revoke, writes are forbidden); a resolved key no table declares fails the whole request.
     */
    static Uni<Optional<Map<String, List<String>>>> resolveOnce(ScopeResolver resolver, SchemaWindow window,
            SyncRequestContext ctx) {
        return Uni.createFrom().deferred(() -> resolver.resolveScopes(ctx))
                .map(Optional::ofNullable)
                .onFailure().recoverWithItem(Optional.empty())
                .invoke(o -> o.ifPresent(m -> EffectiveScopes.validateAllowed(window.current(), m)))
                .memoize().indefinitely();
    }
}
