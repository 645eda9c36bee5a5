package dev.syncular.server.auth;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;
import java.util.Set;
import org.jose4j.json.JsonUtil;
import org.jose4j.lang.JoseException;

/**
 * The syntactic checks on a bearer token, done before any key is looked up, so a token that is not even a JWS
 * causes no key lookup and no outbound call: three non-empty base64url parts (RFC 7515 §7.1, no padding), a
 * UTF-8 JSON object as header, an {@code alg} from the allow-list ({@code none} never is), a UTF-8 JSON object
 * as payload (the JWT claims set, RFC 7519 §7.2). Refused as {@link TokenRejection#MALFORMED}: a {@code crit}
 * header (no extension is understood, RFC 7515 §4.1.11) and a {@code b64} header (RFC 7797 unencoded
 * payloads are not JWTs). Header keys ({@code jwk}, {@code jku}, {@code x5u}, {@code x5c}) are never used:
 * keys come only from the configuration.
 *
 * @param kid the header's {@code kid}, or {@code null}
 * @param alg the header's {@code alg}, one of the accepted algorithms
 * @param claims the payload's members (jose4j's JSON: strings, {@code Long}/{@code Double}, lists, maps)
 */
record CompactJws(String token, String kid, String alg, Map<String, Object> claims) {
    /** Longer tokens are refused unread; HTTP header limits keep real ones far below. */
    static final int MAX_TOKEN_CHARS = 16 * 1024;

    /** Parses {@code token}; throws the {@link TokenRejection} error (a {@code SyncError}) when it is not a JWS. */
    static CompactJws parse(String token, Set<String> algorithms) {
        if (token.length() > MAX_TOKEN_CHARS) {
            throw TokenRejection.MALFORMED.error();
        }
        int first = token.indexOf('.');
        int second = first < 0 ? -1 : token.indexOf('.', first + 1);
        if (first <= 0 || second <= first + 1 || token.indexOf('.', second + 1) >= 0) {
            throw TokenRejection.MALFORMED.error();
        }
        Map<String, Object> header = object(token.substring(0, first));
        if (!(header.get("alg") instanceof String alg)) {
            throw TokenRejection.MALFORMED.error();
        }
        if (!algorithms.contains(alg)) { // "none" never is: an unsigned token is refused as an algorithm
            throw TokenRejection.ALGORITHM.error();
        }
        if (!base64url(token.substring(second + 1))) {
            throw TokenRejection.MALFORMED.error();
        }
        if (header.containsKey("crit") || header.containsKey("b64")) {
            throw TokenRejection.MALFORMED.error();
        }
        Object kid = header.get("kid");
        if (kid != null && !(kid instanceof String)) {
            throw TokenRejection.MALFORMED.error();
        }
        Map<String, Object> claims = object(token.substring(first + 1, second));
        return new CompactJws(token, (String) kid, alg, claims);
    }

    /** A base64url part holding a UTF-8 JSON object (duplicate member names refused), else MALFORMED. */
    private static Map<String, Object> object(String part) {
        if (!base64url(part)) {
            throw TokenRejection.MALFORMED.error();
        }
        try {
            byte[] bytes = Base64.getUrlDecoder().decode(part);
            String json = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
            Map<String, Object> map = JsonUtil.parseJson(json);
            if (map == null) {
                throw TokenRejection.MALFORMED.error();
            }
            return map;
        } catch (IllegalArgumentException | CharacterCodingException | JoseException | ClassCastException e) {
            throw TokenRejection.MALFORMED.error();
        }
    }

    /** Non-empty, the URL-safe alphabet only, no padding, a length a base64 encoding can have. */
    private static boolean base64url(String part) {
        if (part.isEmpty() || part.length() % 4 == 1) {
            return false;
        }
        for (int i = 0; i < part.length(); i++) {
            char c = part.charAt(i);
            boolean ok =
                    (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
            if (!ok) {
                return false;
            }
        }
        return true;
    }
}
