package dev.syncular.server.testsupport;

import java.util.HashMap;
import java.util.Map;

/** Rows of the {@code notes} table of the test schema ({@code src/test/resources/schema/notes.json}). */
public final class Notes {
    private Notes() {}

    /** A note of project p1 with the given {@code priority} (nullable: what a backfill fills). */
    public static Map<String, Object> note(String id, Long priority) {
        Map<String, Object> row = new HashMap<>();
        row.put("id", id);
        row.put("project_id", "p1");
        row.put("title", "title " + id);
        row.put("body", null);
        row.put("priority", priority);
        row.put("done", false);
        return row;
    }
}
