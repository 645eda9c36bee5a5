package dev.syncular.server.auth;

/**
 * The hygiene rule for identity text taken from a credential (actor, partition, scope variables and values):
 * such text is used exactly as sent or refused, never trimmed or folded, so {@code "alice\u0000"} or
 * {@code " alice "} can never become {@code alice} (and use alice's client ids). Refused: the empty string,
 * control characters (U+0000–U+001F, U+007F) anywhere, and whitespace (including no-break and other Unicode
 * spaces) at either end.
 */
final class ClaimText {
    private ClaimText() {}

    /** Whether {@code s} may be used as an identity value (see the class comment); {@code null} is not. */
    static boolean clean(String s) {
        if (s == null || s.isEmpty() || blank(s.charAt(0)) || blank(s.charAt(s.length() - 1))) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                return false;
            }
        }
        return true;
    }

    /** Whether scope values (variable names and values alike) are all {@link #clean}; empty values are allowed. */
    static boolean cleanScopeText(String s) {
        return s != null && (s.isEmpty() || clean(s));
    }

    private static boolean blank(char c) {
        return Character.isWhitespace(c) || Character.isSpaceChar(c);
    }
}
