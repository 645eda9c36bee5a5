package dev.syncular.server.console;

import dev.syncular.server.auth.JwtAuthenticator;
import io.smallrye.mutiny.Uni;
import java.util.List;
import java.util.Map;

/**
 * Console sign-in with a JWT ({@code syncular.admin.console.role}, {@code .role-claim}): a token that passes every
 * JWT check of the server ({@link JwtAuthenticator#verifiedClaims}: signature, expiry, issuer, audience) and whose
 * role claim — a string or an array of strings, a dotted path into nested objects — holds the admin role. The
 * session is {@code jwt:<sub>} and lasts at most until the token's {@code exp}.
 */
final class ConsoleRole {
    /** JWT sign-in off: only the admin token signs in. */
    static final ConsoleRole OFF = new ConsoleRole(null, "", "");

    /** Who signs in, and until when at the latest (epoch ms). */
    record Grant(String principal, long untilMs) {}

    private final JwtAuthenticator jwt;
    private final String[] claimPath;
    private final String role;

    ConsoleRole(JwtAuthenticator jwt, String claim, String role) {
        this.jwt = jwt;
        this.claimPath = claim.split("\\.");
        this.role = role;
    }

    /** The grant of {@code token}, or a {@code null} item when it is not a valid JWT carrying the role. */
    Uni<Grant> grant(String token) {
        if (jwt == null
                || token.isEmpty()
                || token.chars().filter(c -> c == '.').count() != 2) {
            return Uni.createFrom().nullItem();
        }
        return jwt.verifiedClaims(token).map(this::grantOf).onFailure().recoverWithNull();
    }

    private Grant grantOf(Map<String, Object> claims) {
        Object at = claims;
        for (String part : claimPath) {
            at = at instanceof Map<?, ?> m ? m.get(part) : null;
        }
        boolean holds = at instanceof String s ? s.equals(role) : at instanceof List<?> list && list.contains(role);
        Object sub = claims.get("sub");
        if (!holds || !(sub instanceof String subject) || !printable(subject)) {
            return null;
        }
        Object exp = claims.get("exp");
        long until = exp instanceof Number n ? (long) (n.doubleValue() * 1000) : Long.MAX_VALUE;
        return new Grant("jwt:" + subject, until);
    }

    /** A subject fit for an audit line: 1–256 characters, none a control character. */
    private static boolean printable(String s) {
        return !s.isEmpty() && s.length() <= 256 && s.chars().noneMatch(Character::isISOControl);
    }
}
