package dev.syncular.server.console;

import io.quarkus.qute.CheckedTemplate;
import io.quarkus.qute.TemplateData;
import io.quarkus.qute.TemplateInstance;
import java.util.List;

/**
 * The confirmation step before a console action that cannot be undone (rotate an epoch, prune, declare a
 * checkpoint no build carries, activate, retry): a page saying what will happen, with the one form that does it.
 *
 * @param title   the question
 * @param message what the action does
 * @param warning an extra warning ({@code ""}: none)
 * @param action  the form's target, absolute
 * @param fields  hidden fields the action needs (besides the CSRF token)
 * @param button  the submit button's label
 * @param back    where "cancel" goes, absolute
 */
@TemplateData
public record Confirmation(
        String title, String message, String warning, String action, List<Field> fields, String button, String back) {

    /** A hidden form field. */
    @TemplateData
    public record Field(String name, String value) {}

    @CheckedTemplate
    static class Templates {
        static native TemplateInstance confirm(ConsoleChrome chrome, Confirmation c);
    }

    String render(ConsoleChrome chrome) {
        return Templates.confirm(chrome, this).render();
    }
}
