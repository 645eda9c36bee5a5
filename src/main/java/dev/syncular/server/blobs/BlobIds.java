package dev.syncular.server.blobs;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Blob content addresses (§5.9.1): {@code "sha256:" + 64 lowercase hex} of the blob bytes, the segment id form. */
public final class BlobIds {
    public static final String PREFIX = "sha256:";
    private static final int LENGTH = PREFIX.length() + 64;

    private BlobIds() {}

    /** Whether {@code blobId} has the exact content-address form (lowercase hex only). */
    public static boolean isValid(String blobId) {
        if (blobId == null || blobId.length() != LENGTH || !blobId.startsWith(PREFIX)) {
            return false;
        }
        for (int i = PREFIX.length(); i < LENGTH; i++) {
            char c = blobId.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return false;
            }
        }
        return true;
    }

    /** The 64 hex digits of a valid blob id. */
    public static String hex(String blobId) {
        return blobId.substring(PREFIX.length());
    }

    /** The blob id of a SHA-256 digest. */
    public static String of(byte[] sha256) {
        return PREFIX + HexFormat.of().formatHex(sha256);
    }

    /** The content address of {@code bytes}. */
    public static String compute(byte[] bytes) {
        return of(newDigest().digest(bytes));
    }

    public static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }
}
