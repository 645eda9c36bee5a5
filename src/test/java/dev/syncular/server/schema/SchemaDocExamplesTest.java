package dev.syncular.server.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.wire.ColumnType;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The schemas shown in docs/SCHEMA.md compile, and every reason token the compiler can raise is documented. */
class SchemaDocExamplesTest {
    private static final Path DOC = Path.of("docs", "SCHEMA.md");

    private static List<String> jsonBlocks(String doc) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("```json\\n(.*?)```", Pattern.DOTALL).matcher(doc);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    @Test
    void theExamplesCompile() throws IOException {
        List<String> blocks = jsonBlocks(Files.readString(DOC, StandardCharsets.UTF_8));
        assertEquals(2, blocks.size(), "the complete example and the short host form");

        CompiledSchema full = SchemaLoader.parse(blocks.get(0));
        assertEquals(2, full.version());
        TableSchema todos = full.table("todos");
        assertEquals(1, todos.references().size());
        assertEquals("yjs-doc", todos.column("body").crdtType());
        assertTrue(todos.column("note").encrypted());
        assertEquals(ColumnType.STRING, todos.column("note").declaredType());

        CompiledSchema shortForm = SchemaLoader.parse(blocks.get(1));
        assertEquals("yjs-doc", shortForm.table("todos").column("body").crdtType());
    }

    @Test
    void everyReasonInTheSourcesIsDocumented() throws IOException {
        String doc = Files.readString(DOC, StandardCharsets.UTF_8);
        Pattern reason = Pattern.compile("(?:reason|fail)\\(\"([a-z_]+)\"");
        List<String> missing = new ArrayList<>();
        try (var files = Files.list(Path.of("src/main/java/dev/syncular/server/schema"))) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Matcher m = reason.matcher(Files.readString(f, StandardCharsets.UTF_8));
                while (m.find()) {
                    if (!doc.contains("`" + m.group(1) + "`")) {
                        missing.add(m.group(1));
                    }
                }
            }
        }
        assertTrue(missing.isEmpty(), DOC + " does not document the reasons " + missing);
    }
}
