package dev.syncular.server.realtime;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.round.HttpError;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.HttpServerRequest;
import java.util.List;

/**
 * The bearer token of a realtime upgrade from a browser, which cannot set an {@code Authorization} header on a
 * WebSocket: from the query parameter {@code syncular.realtime.token-query-parameter} (RFC 6750 §2.3,
 * {@code access_token} by default) or, when configured, the cookie {@code syncular.realtime.token-cookie}. The
 * header wins when it is present; the token found is handed to the authenticator as
 * {@code Authorization: Bearer <token>}, so it passes exactly the checks a header token passes (§8.1: the same
 * host authentication as {@code POST /sync}). The parameter is removed from the query the upgrade is rerouted
 * with, and no log line of this server names it.
 */
final class UpgradeToken {
    static final String OFF = "off";

    private final String queryParameter;
    private final String cookie;

    UpgradeToken(RealtimeConfig config) {
        this.queryParameter = config.tokenQueryParameter().trim();
        this.cookie = config.tokenCookie().trim();
    }

    private boolean queryOn() {
        return !queryParameter.isEmpty() && !queryParameter.equals(OFF);
    }

    /**
     * Puts the browser's token into {@code Authorization} when the header is absent. A token parameter given more
     * than once is refused (400 {@code sync.invalid_request}): which one authenticates would be a guess.
     */
    void apply(HttpServerRequest req) {
        if (req.getHeader("Authorization") != null) {
            return; // the header wins
        }
        String token = null;
        if (queryOn()) {
            List<String> values = req.params().getAll(queryParameter);
            if (values.size() > 1) {
                throw new HttpError(
                        400, ErrorCode.INVALID_REQUEST, "the token query parameter is given more than once");
            }
            if (values.size() == 1 && !values.get(0).isEmpty()) {
                token = values.get(0);
            }
        }
        if (token == null && !cookie.isEmpty() && !cookie.equals(OFF)) {
            Cookie c = req.getCookie(cookie);
            if (c != null && !c.getValue().isEmpty()) {
                token = c.getValue();
            }
        }
        if (token != null) {
            req.headers().set("Authorization", "Bearer " + token);
        }
    }
}
