package dev.syncular.server.storage;

import java.nio.charset.StandardCharsets;

/**
 * What the storage can hold as text, checked by its callers before client input reaches it, so a value the
 * database cannot take is refused as a request error and never fails a statement.
 *
 * <ul>
 *   <li>No text holds U+0000: PostgreSQL {@code text} and {@code jsonb} cannot store it.
 *   <li>An identifier that is part of an index key — partition, actor, {@code clientId}, {@code clientCommitId},
 *       row id, scope value (§3.1 scope keys), subscription id, checkpoint name — is at most
 *       {@value #MAX_KEY_BYTES} UTF-8 bytes. A btree entry must fit in about a third of a page (2,704 bytes);
 *       the widest key ({@code sync_row_scopes}: partition, table, scope key, row id) stays well inside it.
 * </ul>
 */
public final class StorableText {
    /** The longest identifier, in UTF-8 bytes, that may become part of an index key. */
    public static final int MAX_KEY_BYTES = 512;

    private StorableText() {}

    /** Whether {@code text} can be stored at all (it holds no U+0000). */
    public static boolean storable(String text) {
        return text.indexOf('\u0000') < 0;
    }

    /** Whether {@code text} can be stored as part of an index key: no U+0000, at most {@value #MAX_KEY_BYTES} bytes. */
    public static boolean storableKey(String text) {
        // a char is at most 3 UTF-8 bytes (a surrogate pair, two chars, is 4): short strings need no encoding
        return storable(text)
                && (text.length() * 3 <= MAX_KEY_BYTES
                        || text.getBytes(StandardCharsets.UTF_8).length <= MAX_KEY_BYTES);
    }
}
