package dev.syncular.server.storage;

import java.util.Objects;

/**
 * A signed-in operator console session, as stored: never the session id itself, only its SHA-256
 * ({@code idHash}), so a read of the table does not hand out live sessions.
 *
 * @param idHash      SHA-256 of the random session id the browser holds in its cookie
 * @param principal   who signed in: {@code admin-token}, or the subject of an admin JWT
 * @param csrfToken   the session's CSRF token, carried by every console form and action
 * @param createdAtMs when the session was created
 * @param expiresAtMs when it stops being valid (fixed at sign-in: {@code syncular.admin.console.session-ttl})
 */
public record ConsoleSession(byte[] idHash, String principal, String csrfToken, long createdAtMs, long expiresAtMs) {
    public ConsoleSession {
        Objects.requireNonNull(idHash, "idHash");
        Objects.requireNonNull(principal, "principal");
        Objects.requireNonNull(csrfToken, "csrfToken");
        idHash = idHash.clone();
    }

    @Override
    public byte[] idHash() {
        return idHash.clone();
    }
}
