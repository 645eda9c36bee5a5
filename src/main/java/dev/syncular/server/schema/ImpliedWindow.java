package dev.syncular.server.schema;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The §9 window a schema change implies: the new document as the current schema, followed by each version the
 * running window serves that is older than it and that {@link SchemaWindow#checkOlder} admits (the rule start-up
 * applies to {@code syncular.schema.window}), newest first. A served version the rule refuses is left out
 * ({@link #excluded}, with the rule's reason, table and column): its clients get the §1.6 floor naming the window's
 * oldest version once the change is served.
 *
 * @param window   the implied window
 * @param excluded the served versions it leaves out, newest first
 */
public record ImpliedWindow(SchemaWindow window, List<Excluded> excluded) {
    /** A served version the implied window leaves out, and why ({@link SchemaException#details()}). */
    public record Excluded(int version, String message, Map<String, Object> details) {
        public Excluded {
            details = Map.copyOf(details);
        }
    }

    public ImpliedWindow {
        excluded = List.copyOf(excluded);
    }

    /** The window serving {@code next} after {@code served}: see the class comment. */
    public static ImpliedWindow of(CompiledSchema next, SchemaWindow served) {
        List<CompiledSchema> kept = new ArrayList<>();
        kept.add(next);
        List<Excluded> excluded = new ArrayList<>();
        for (CompiledSchema s : served.schemas()) {
            if (s.version() >= next.version()) {
                continue; // the new document replaces it (same version) or is older (the storage refuses the change)
            }
            try {
                SchemaWindow.checkOlder(next, s);
                kept.add(s);
            } catch (SchemaException e) {
                excluded.add(new Excluded(s.version(), e.getMessage(), e.details()));
            }
        }
        return new ImpliedWindow(SchemaWindow.of(next, kept), excluded);
    }
}
