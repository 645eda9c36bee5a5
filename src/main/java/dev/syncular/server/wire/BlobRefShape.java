package dev.syncular.server.wire;

/**
 * The pinned canonical BlobRef shape of a {@code blob_ref} value (§5.9.1):
 * {@code {"blobId":"sha256:<64 hex>","byteLength":<int ≥ 0>[,"mediaType":"…"][,"name":"…"]}} with that
 * exact key order and no insignificant whitespace. Checked at row-codec decode after the JSON parse.
 */
public final class BlobRefShape {
    private static final String HEAD = "{\"blobId\":\"sha256:";

    private BlobRefShape() {}

    /**
     * The {@code blobId} ({@code "sha256:" + 64 lowercase hex}) of a BlobRef, or {@code null} when the text
     * does not start like a canonical BlobRef. Reads only the fixed-position prefix: use on values that
     * already passed {@link #require} at decode.
     */
    public static String blobIdOf(String text) {
        int end = HEAD.length() + 64;
        if (text == null || text.length() <= end || !text.startsWith(HEAD) || text.charAt(end) != '"') {
            return null;
        }
        for (int i = HEAD.length(); i < end; i++) {
            char c = text.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                return null;
            }
        }
        return text.substring("{\"blobId\":\"".length(), end);
    }

    public static void require(String text) {
        if (JsonText.requireDocumentReportWhitespace(text)) {
            throw bad();
        }
        if (!text.startsWith(HEAD)) {
            throw bad();
        }
        int i = HEAD.length();
        for (int k = 0; k < 64; k++, i++) {
            char c = at(text, i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
                throw bad();
            }
        }
        i = expect(text, i, "\",\"byteLength\":");
        int start = i;
        while (i < text.length() && text.charAt(i) >= '0' && text.charAt(i) <= '9') {
            i++;
        }
        int digits = i - start;
        if (digits == 0 || digits > 16 || (digits > 1 && text.charAt(start) == '0')) {
            throw bad();
        }
        if (Long.parseLong(text, start, i, 10) > WireReader.MAX_SAFE_INTEGER) {
            throw bad();
        }
        if (text.startsWith(",\"mediaType\":", i)) {
            i = stringEnd(text, i + ",\"mediaType\":".length());
        }
        if (text.startsWith(",\"name\":", i)) {
            i = stringEnd(text, i + ",\"name\":".length());
        }
        if (i != text.length() - 1 || text.charAt(i) != '}') {
            throw bad();
        }
    }

    private static int expect(String text, int i, String lit) {
        if (!text.startsWith(lit, i)) {
            throw bad();
        }
        return i + lit.length();
    }

    /** Index just past a JSON string starting at {@code i} (the document is already known valid). */
    private static int stringEnd(String text, int i) {
        if (at(text, i) != '"') {
            throw bad();
        }
        i++;
        while (true) {
            char c = at(text, i++);
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                return i;
            }
        }
    }

    private static char at(String text, int i) {
        if (i >= text.length()) {
            throw bad();
        }
        return text.charAt(i);
    }

    private static WireException bad() {
        return WireException.invalid("blob_ref value violates the canonical BlobRef shape");
    }
}
