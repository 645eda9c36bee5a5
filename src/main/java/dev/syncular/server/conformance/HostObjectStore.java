package dev.syncular.server.conformance;

import dev.syncular.server.blobs.BlobContent;
import dev.syncular.server.blobs.BlobInfo;
import dev.syncular.server.blobs.BlobPage;
import dev.syncular.server.blobs.BlobStore;
import dev.syncular.server.blobs.PresignedUrl;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Capability {@code blob-presign}: the conformance host playing the object store and CDN of a delegated-presign
 * blob store (§5.9.3 upload grants, §5.9.5 always-issue downloads). It wraps the instance's embedded store; while
 * presigning is switched on ({@code setBlobPresign}) it mints {@code conformance-object://} URLs — the operation,
 * the blob, the granted length and an expiry on the instance's clock, HMAC-signed with the instance's key — and
 * {@link #put}/{@link #fetch} honour them exactly as an object host would: no actor identity, the URL is the whole
 * grant; an expired, altered or wrong-operation URL is refused, a PUT must carry exactly the granted length, and
 * bytes that do not hash to the blob id are refused (as an S3 conditional PUT refuses them).
 */
final class HostObjectStore implements BlobStore {
    /** §5.4 TTL guidance: well under 15 minutes. */
    static final long URL_TTL_MS = 10 * 60_000;

    private final BlobStore store;
    private final byte[] key;
    private final String instanceId;
    private final LongSupplier clock;
    final AtomicBoolean presign = new AtomicBoolean();

    HostObjectStore(BlobStore store, byte[] key, String instanceId, LongSupplier clock) {
        this.store = store;
        this.key = key.clone();
        this.instanceId = instanceId;
        this.clock = clock;
    }

    @Override
    public Uni<BlobInfo> put(String partition, BlobContent content, String mediaType, long nowMs) {
        return store.put(partition, content, mediaType, nowMs);
    }

    @Override
    public Uni<BlobInfo> describe(String partition, String blobId) {
        return store.describe(partition, blobId);
    }

    @Override
    public Multi<byte[]> read(String partition, String blobId) {
        return store.read(partition, blobId);
    }

    @Override
    public Uni<Boolean> delete(String partition, String blobId) {
        return store.delete(partition, blobId);
    }

    @Override
    public Uni<BlobPage> listCreatedBefore(long cutoffMs, String after, int limit) {
        return store.listCreatedBefore(cutoffMs, after, limit);
    }

    @Override
    public boolean canPresign() {
        return presign.get();
    }

    @Override
    public Uni<PresignedUrl> presignGet(String partition, String blobId, long nowMs) {
        return Uni.createFrom().item(mint("get", partition, blobId, -1, nowMs));
    }

    @Override
    public Uni<PresignedUrl> presignPut(String partition, String blobId, long byteLength, long nowMs) {
        return Uni.createFrom().item(mint("put", partition, blobId, byteLength, nowMs));
    }

    /** {@code putBlobUrl}: stores {@code bytes} at a presigned PUT URL. */
    Uni<Void> put(String url, byte[] bytes) {
        Grant g = verify(url, "put");
        if (bytes.length != g.length) {
            return Uni.createFrom()
                    .failure(new SyncError(ErrorCode.INVALID_REQUEST, "body length differs from the grant"));
        }
        BlobContent content;
        try {
            content = BlobContent.verify(g.blobId, bytes);
        } catch (RuntimeException e) {
            return Uni.createFrom()
                    .failure(new SyncError(ErrorCode.BLOB_HASH_MISMATCH, "bytes do not match the blob id"));
        }
        return store.put(g.partition, content, null, clock.getAsLong()).replaceWithVoid();
    }

    /** {@code fetchBlobUrl}: the bytes at a presigned GET URL. */
    Uni<byte[]> fetch(String url) {
        Grant g = verify(url, "get");
        return store.read(g.partition, g.blobId)
                .collect()
                .in(ByteArrayOutputStream::new, ByteArrayOutputStream::writeBytes)
                .map(ByteArrayOutputStream::toByteArray)
                .onFailure(NoSuchElementException.class)
                .transform(e -> new SyncError(ErrorCode.BLOB_NOT_FOUND, "no object at this url"));
    }

    private record Grant(String partition, String blobId, long length) {}

    private PresignedUrl mint(String op, String partition, String blobId, long length, long nowMs) {
        long exp = nowMs + URL_TTL_MS;
        String query = "op=" + op + "&p=" + enc(partition) + "&len=" + length + "&exp=" + exp;
        String url =
                "conformance-object://" + instanceId + "/" + enc(blobId) + "?" + query + "&sig=" + sign(blobId, query);
        return new PresignedUrl(url, exp);
    }

    private Grant verify(String url, String op) {
        URI uri;
        try {
            uri = URI.create(url);
        } catch (IllegalArgumentException e) {
            throw new SyncError(ErrorCode.FORBIDDEN, "not a presigned url");
        }
        Map<String, String> q = new HashMap<>();
        String raw = uri.getRawQuery() == null ? "" : uri.getRawQuery();
        int sigAt = raw.lastIndexOf("&sig=");
        for (String kv : raw.split("&")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                q.put(kv.substring(0, eq), URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        String blobId = uri.getRawPath() == null || uri.getRawPath().length() < 2
                ? ""
                : URLDecoder.decode(uri.getRawPath().substring(1), StandardCharsets.UTF_8);
        if (!"conformance-object".equals(uri.getScheme())
                || !instanceId.equals(uri.getHost())
                || sigAt < 0
                || !MessageDigest.isEqual(
                        sign(blobId, raw.substring(0, sigAt)).getBytes(StandardCharsets.UTF_8),
                        String.valueOf(q.get("sig")).getBytes(StandardCharsets.UTF_8))
                || !op.equals(q.get("op"))) {
            throw new SyncError(ErrorCode.FORBIDDEN, "presigned url refused");
        }
        if (clock.getAsLong() >= Long.parseLong(q.get("exp"))) {
            throw new SyncError(ErrorCode.FORBIDDEN, "presigned url expired");
        }
        return new Grant(q.get("p"), blobId, Long.parseLong(q.get("len")));
    }

    private String sign(String blobId, String query) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            return HexFormat.of().formatHex(mac.doFinal((blobId + "\n" + query).getBytes(StandardCharsets.UTF_8)));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 unavailable", e);
        }
    }

    private static String enc(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }
}
