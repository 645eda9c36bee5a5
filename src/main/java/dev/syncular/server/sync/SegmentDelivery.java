package dev.syncular.server.sync;

import dev.syncular.server.blobs.BlobIds;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.segments.SegmentPublication;
import dev.syncular.server.segments.SegmentStore;
import dev.syncular.server.segments.SegmentUrlSigner;
import dev.syncular.server.segments.SegmentUrls;
import dev.syncular.server.segments.StoredSegment;
import dev.syncular.server.storage.PartitionState;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.sync.RowsPageEncoder.EncodedSegment;
import dev.syncular.server.sync.SyncEngine.SegmentDownload;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.MediaType;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * Segment delivery: a rows segment inline (§5.7) or published and described by reference (§5.4), with a
 * short-lived URL for clients advertising {@code accept} bit 3; and the downloads of §5.5 — the direct
 * download re-authorized against the requested scopes, and the native signed URL that is its own grant —
 * each behind the §2.4 serve gate.
 */
final class SegmentDelivery {
    private final SchemaWindow window;
    private final SyncStorage storage;
    private final SegmentStore segments;
    private final ScopeResolver resolver;
    private final SyncLimits limits;
    private final LongSupplier clock;
    private final ServeGateCheck check;
    /** §5.4 descriptor URLs (native HMAC or provider presigned); null = descriptors carry no URL. */
    private final SegmentUrls urls;
    /** The native scheme's verifier, when {@link #urls} is the native signer (signed download route). */
    private final SegmentUrlSigner signer;

    SegmentDelivery(
            SchemaWindow window,
            SyncStorage storage,
            SegmentStore segments,
            ScopeResolver resolver,
            SyncLimits limits,
            LongSupplier clock,
            ServeGateCheck check,
            SegmentUrls urls) {
        this.window = window;
        this.storage = storage;
        this.segments = segments;
        this.resolver = resolver;
        this.limits = limits;
        this.clock = clock;
        this.check = check;
        this.urls = urls;
        this.signer = urls instanceof SegmentUrlSigner native_ ? native_ : null;
    }

    /** §4.2 accept bits and §5.7 size guidance decide inline versus reference delivery. */
    Uni<Frame> emitSegment(
            RoundState round,
            PullHeader pull,
            TableSchema table,
            String digest,
            long asOf,
            PartitionState state,
            String rowCursor,
            String nextRowCursor,
            int rowCount,
            EncodedSegment encoded) {
        byte[] segment = encoded.bytes();
        if (inline(pull, segment.length)) {
            return Uni.createFrom().item(new SegmentInline(segment));
        }
        String segmentId = encoded.segmentId();
        long now = clock.getAsLong();
        SegmentPublication publication = new SegmentPublication(
                round.ctx.partition(),
                state.logEpoch(),
                table.name(),
                round.clientSchema.version(),
                MediaType.ROWS,
                digest,
                asOf,
                rowCursor,
                nextRowCursor,
                rowCount,
                now,
                now + limits.segmentTtlMs());
        // §5.4: a short-lived native signed URL only for clients advertising bit 3 (minted right after scope
        // resolution, inside this pull).
        SegmentUrlSigner.SignedUrl url = url(pull, segmentId, digest, round, now);
        return segments.publish(segmentId, segment, publication)
                .map(v -> new SegmentRef(
                        segmentId,
                        MediaType.ROWS,
                        table.name(),
                        segment.length,
                        rowCount,
                        asOf,
                        digest,
                        rowCursor,
                        nextRowCursor,
                        url == null ? null : url.url(),
                        url == null ? null : url.expiresAtMs()));
    }

    /** §4.2 accept bits and §5.7 size guidance: whether a rows segment of {@code length} bytes goes inline. */
    boolean inline(PullHeader pull, int length) {
        return pull.accepts(PullHeader.ACCEPT_INLINE_ROWS)
                && (!pull.accepts(PullHeader.ACCEPT_EXTERNAL_ROWS) || length < limits.inlineSegmentMaxBytes());
    }

    /** §5.4: a URL only for clients advertising bit 3, minted inside this pull right after scope resolution. */
    SegmentUrlSigner.SignedUrl url(PullHeader pull, String segmentId, String digest, RoundState round, long now) {
        return urls != SegmentUrls.NONE && pull.accepts(PullHeader.ACCEPT_SIGNED_URLS)
                ? urls.issue(segmentId, digest, round.ctx.partition(), now)
                : null;
    }

    /**
     * §5.5 direct download: re-authorize against the requested scopes — the recomputed digest must belong
     * to an unexpired publication in the caller's partition and live log epoch.
     */
    Uni<SegmentDownload> authorize(
            SyncRequestContext ctx, String segmentId, Map<String, List<String>> requestedScopes) {
        if (ctx.unstorable() != null) {
            return Uni.createFrom().failure(ctx.unstorable());
        }
        if (!BlobIds.isValid(segmentId)) {
            // §5.1: a segment id is a content address ("sha256:" + 64 hex, the blob id form); nothing else exists
            return Uni.createFrom().failure(notFound());
        }
        long now = clock.getAsLong();
        return storage.readPartition(ctx.partition()).flatMap(state -> {
            if (state == null) {
                return Uni.createFrom().failure(notFound());
            }
            return check.admit(ctx.partition())
                    .flatMap(gate -> check.verified(
                            ctx.partition(), gate, download(ctx, segmentId, requestedScopes, state, now)));
        });
    }

    private Uni<SegmentDownload> download(
            SyncRequestContext ctx,
            String segmentId,
            Map<String, List<String>> requestedScopes,
            PartitionState state,
            long now) {
        return segments.describe(segmentId).flatMap(stored -> {
            List<SegmentPublication> live = livePublications(stored, ctx.partition(), state.logEpoch());
            if (live.isEmpty()) {
                return Uni.createFrom().failure(notFound());
            }
            List<SegmentPublication> unexpired =
                    live.stream().filter(p -> p.expiresAtMs() > now).toList();
            if (unexpired.isEmpty()) {
                return Uni.createFrom().failure(new SyncError(ErrorCode.SEGMENT_EXPIRED, "segment expired"));
            }
            return RoundState.resolveOnce(resolver, window, ctx).flatMap(allowed -> {
                if (allowed.isEmpty() || !authorizedBy(unexpired, requestedScopes, allowed.get())) {
                    return Uni.createFrom()
                            .failure(new SyncError(
                                    ErrorCode.FORBIDDEN, "segment not authorized for the requested scopes"));
                }
                return segments.read(segmentId)
                        .flatMap(bytes -> bytes == null
                                ? Uni.createFrom().failure(notFound())
                                : Uni.createFrom().item(new SegmentDownload(segmentId, bytes)));
            });
        });
    }

    /**
     * §5.4 native signed URL: the URL is the entire grant — no host authentication. The token's MAC, expiry
     * and segment are verified, and its digest must belong to a live publication in the partition its
     * audience names.
     */
    Uni<SegmentDownload> downloadSigned(String segmentId, String token) {
        long now = clock.getAsLong();
        if (signer == null || !BlobIds.isValid(segmentId)) {
            return Uni.createFrom().failure(notFound());
        }
        SegmentUrlSigner.Claims claims = signer.verify(token, segmentId, now);
        if (claims == null) {
            return Uni.createFrom().failure(new SyncError(ErrorCode.FORBIDDEN, "signed URL rejected"));
        }
        return segments.describe(segmentId).flatMap(stored -> {
            if (stored == null) {
                return Uni.createFrom().failure(notFound());
            }
            List<SegmentPublication> granted = stored.publications().stream()
                    .filter(p -> p.scopeDigest().equals(claims.scopeDigest())
                            && signer.audience(p.partition()).equals(claims.audience()))
                    .toList();
            if (granted.isEmpty()) {
                return Uni.createFrom().failure(new SyncError(ErrorCode.FORBIDDEN, "signed URL rejected"));
            }
            String partition = granted.get(0).partition();
            return storage.readPartition(partition).flatMap(state -> {
                List<SegmentPublication> live = granted.stream()
                        .filter(p -> p.partition().equals(partition)
                                && state != null
                                && p.logEpoch().equals(state.logEpoch()))
                        .toList();
                if (live.isEmpty()) {
                    return Uni.createFrom().failure(notFound());
                }
                if (live.stream().noneMatch(p -> p.expiresAtMs() > now)) {
                    return Uni.createFrom().failure(new SyncError(ErrorCode.SEGMENT_EXPIRED, "segment expired"));
                }
                return check.admit(partition)
                        .flatMap(gate -> check.verified(
                                partition,
                                gate,
                                segments.read(segmentId)
                                        .flatMap(bytes -> bytes == null
                                                ? Uni.createFrom().<SegmentDownload>failure(notFound())
                                                : Uni.createFrom().item(new SegmentDownload(segmentId, bytes)))));
            });
        });
    }

    private boolean authorizedBy(
            List<SegmentPublication> publications,
            Map<String, List<String>> requested,
            Map<String, List<String>> allowed) {
        Map<String, List<String>> effective = EffectiveScopes.effective(requested, allowed);
        if (effective == null) {
            return false;
        }
        String digest = CanonicalJson.scopeDigest(effective);
        for (SegmentPublication p : publications) {
            TableSchema table = window.current().table(p.table());
            if (table != null && p.scopeDigest().equals(digest)) {
                try {
                    EffectiveScopes.validateRequested(table, requested);
                    return true;
                } catch (SyncError e) {
                    return false;
                }
            }
        }
        return false;
    }

    private static List<SegmentPublication> livePublications(StoredSegment stored, String partition, String logEpoch) {
        if (stored == null) {
            return List.of();
        }
        List<SegmentPublication> out = new ArrayList<>();
        for (SegmentPublication p : stored.publications()) {
            if (p.partition().equals(partition) && p.logEpoch().equals(logEpoch)) {
                out.add(p);
            }
        }
        return out;
    }

    private static SyncError notFound() {
        return new SyncError(ErrorCode.NOT_FOUND, "segment not found");
    }
}
