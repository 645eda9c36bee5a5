package dev.syncular.server.console;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/** Console links: identifiers travel in query parameters, encoded here (never in path segments). */
final class Links {
    private Links() {}

    static String q(String value) {
        return URLEncoder.encode(value == null ? "" : value, StandardCharsets.UTF_8);
    }
}
