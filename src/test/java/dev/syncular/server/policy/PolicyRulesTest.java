package dev.syncular.server.policy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.storage.PlannedReaction;
import dev.syncular.server.sync.ValidationRejection;
import dev.syncular.server.sync.WritePolicy;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What the policy compiler and the §6.7 / §6.9 records refuse at construction, so a host bug fails where it is
 * written (start-up, or the planner's own transaction) and never as a stored oddity. No Quarkus.
 */
class PolicyRulesTest {
    private static final CompiledSchema SCHEMA = SchemaLoader.parse(ValidatorsTest.TASKS);

    @Test
    void reservedCodesAndMalformedDetailsFailAtConstruction() {
        for (String code : new String[] {"sync.x", "blob.x", "operation.x", "presence.x", "client.x"}) {
            assertThrows(IllegalArgumentException.class, () -> new ValidationRejection(code, "m"));
        }
        assertThrows(
                RuntimeException.class,
                () -> new ValidationRejection(0, "app.x", "m", Map.of("reason", "Not A Token")));
        assertThrows(RuntimeException.class, () -> new ValidationRejection(0, "app.x", "m", Map.of("stack", "trace")));
        ValidationRejection ok =
                new ValidationRejection(2, "app.x", "m", Map.of("reason", "too_long", "fieldPaths", List.of("title")));
        assertEquals("{\"fieldPaths\":[\"title\"],\"reason\":\"too_long\"}", ok.detailsJson());
        assertEquals(2, ok.opIndex());
    }

    @Test
    void plannedReactionsAreBounded() {
        assertThrows(IllegalArgumentException.class, () -> new PlannedReaction("", "t", 1, "{}", 10));
        assertThrows(IllegalArgumentException.class, () -> new PlannedReaction("k".repeat(257), "t", 1, "{}", 10));
        assertThrows(IllegalArgumentException.class, () -> new PlannedReaction("k", "has space", 1, "{}", 10));
        assertThrows(IllegalArgumentException.class, () -> new PlannedReaction("k", "t", 0, "{}", 10));
        assertThrows(IllegalArgumentException.class, () -> new PlannedReaction("k", "t", 1, "{}", 101));
        assertThrows(RuntimeException.class, () -> new PlannedReaction("k", "t", 1, "{not json", 10));
        assertThrows(
                IllegalArgumentException.class,
                () -> new PlannedReaction("k", "t", 1, "[".repeat(17) + "]".repeat(17), 10));
        assertThrows(
                IllegalArgumentException.class,
                () -> new PlannedReaction(
                        "k", "t", 1, "\"" + "x".repeat(PlannedReaction.MAX_PAYLOAD_BYTES) + "\"", 10));
        assertEquals("task.done", new PlannedReaction("k", "task.done", 3, "{\"a\":[1]}", 1).type());
    }

    @Test
    void theDocumentIsCheckedAgainstTheSchema() {
        WritePolicy p = PolicyDocument.parse(
                "{\"validators\":[{\"table\":\"tasks\",\"rule\":{\"maxLength\":{\"column\":\"title\","
                        + "\"max\":5,\"code\":\"app.long\"}}}],\"reactions\":[{\"table\":\"tasks\",\"type\":\"task.changed\"}]}",
                SCHEMA);
        assertEquals(1, p.rowValidators().get("tasks").size());
        assertEquals(1, p.planners().size());
        String[] refused = {
            "{\"validators\":[{\"table\":\"nope\",\"rule\":{\"maxLength\":{\"column\":\"title\",\"max\":5,\"code\":\"app.x\"}}}]}",
            "{\"validators\":[{\"table\":\"tasks\",\"rule\":{\"maxLength\":{\"column\":\"nope\",\"max\":5,\"code\":\"app.x\"}}}]}",
            "{\"validators\":[{\"table\":\"tasks\",\"rule\":{\"maxLength\":{\"column\":\"title\",\"max\":5}}}]}",
            "{\"validators\":[{\"table\":\"tasks\",\"rule\":{\"unique\":{\"column\":\"title\"}}}]}",
            "{\"commitValidators\":[{\"requireSiblingWhen\":{\"table\":\"tasks\",\"column\":\"done\",\"siblingRowIdSuffix\":\"-a\","
                    + "\"code\":\"app.x\"}}]}",
            "{\"reactions\":[{\"table\":\"tasks\",\"type\":\"bad type\"}]}",
            "{\"reactions\":[{\"table\":\"tasks\",\"type\":\"t\",\"op\":\"insert\"}]}",
            "not json"
        };
        for (String doc : refused) {
            assertThrows(IllegalArgumentException.class, () -> PolicyDocument.parse(doc, SCHEMA), doc);
        }
        assertTrue(PolicyDocument.parse("{}", SCHEMA).rowValidators().isEmpty());
    }
}
