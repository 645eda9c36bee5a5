package dev.syncular.server.console;

import dev.syncular.server.storage.ConsoleSession;
import io.quarkus.qute.TemplateData;

/**
 * What every console page's frame shows ({@code templates/console-layout.html}): the console's path prefix for
 * links and assets, who is signed in, the session's CSRF token for its forms, and the page's title (its nav entry
 * is marked current).
 */
@TemplateData
public record ConsoleChrome(String base, String principal, String csrf, String page) {

    static ConsoleChrome of(ConsoleAccess access, ConsoleSession session, String page) {
        return new ConsoleChrome(access.base(), session.principal(), session.csrfToken(), page);
    }

    /** Whether {@code name} is this page (its nav entry gets {@code aria-current}). */
    public boolean is(String name) {
        return page.equals(name);
    }
}
