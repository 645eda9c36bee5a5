package dev.syncular.server.policy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.PlannedReaction;
import dev.syncular.server.sync.CommitValidator;
import dev.syncular.server.sync.ReactionPlanner;
import dev.syncular.server.sync.RowValidator;
import dev.syncular.server.sync.ValidationRejection;
import dev.syncular.server.sync.WritePolicy;
import dev.syncular.server.wire.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The declarative application policy: a JSON document (the file {@code syncular.policy.file}, or the conformance
 * host's install calls) compiled against the running schema into validators and planners. Shape:
 *
 * <pre>{@code
 * {"validators": [{"table": "tasks", "rule": {"maxLength": {"column": "title", "max": 200, "code": "app.title_too_long"}}},
 *                 {"table": "tasks", "rule": {"immutableWhen": {"column": "title", "guardColumn": "done",
 *                                                               "guardValue": true, "code": "app.done_task_frozen"}}}],
 *  "commitValidators": [{"requireSiblingWhen": {"table": "tasks", "column": "done", "equals": true,
 *                                               "siblingRowIdSuffix": "-audit", "code": "app.audit_required"}}],
 *  "reactions": [{"table": "tasks", "op": "upsert", "when": {"column": "done", "equals": true},
 *                 "type": "task.completed", "version": 1, "maxAttempts": 10}]}
 * }</pre>
 *
 * A rule may also be written flat, with its name under {@code kind} ({@code {"kind": "maxLength", "column": ...}}).
 * Every table and column is checked here: an unknown one, a missing field or a reserved code prefix is a
 * {@link IllegalArgumentException} (start-up fails; the conformance host answers it as a bad request).
 */
public final class PolicyDocument {

    private PolicyDocument() {}

    public static WritePolicy parse(String json, CompiledSchema schema) {
        try {
            return compile(Json.readTree(json), schema);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("policy document is not JSON");
        }
    }

    public static WritePolicy compile(JsonNode doc, CompiledSchema schema) {
        return new WritePolicy(
                rowValidators(doc.path("validators"), schema),
                commitValidators(doc.path("commitValidators"), schema),
                planners(doc.path("reactions"), schema));
    }

    /** {@code [{table, rule}]} — the conformance host's {@code installValidators} argument. */
    public static Map<String, List<RowValidator>> rowValidators(JsonNode list, CompiledSchema schema) {
        Map<String, List<RowValidator>> out = new LinkedHashMap<>();
        for (JsonNode entry : array(list, "validators")) {
            TableSchema table = table(schema, text(entry, "table"));
            Rule rule = rule(entry.path("rule"));
            RowValidator v = switch (rule.kind) {
                case "maxLength" ->
                    new MaxLengthRule(column(table, rule.body, "column"), positive(rule.body, "max"), code(rule.body));
                case "immutableWhen" ->
                    new ImmutableWhenRule(
                            table,
                            column(table, rule.body, "column"),
                            column(table, rule.body, "guardColumn"),
                            required(rule.body, "guardValue"),
                            code(rule.body));
                default -> throw new IllegalArgumentException("unknown validator rule " + rule.kind);
            };
            out.computeIfAbsent(table.name(), t -> new ArrayList<>()).add(v);
        }
        return out;
    }

    /** {@code [{requireSiblingWhen: {...}}]}; a single object is one rule. */
    public static List<CommitValidator> commitValidators(JsonNode list, CompiledSchema schema) {
        List<CommitValidator> out = new ArrayList<>();
        for (JsonNode entry : list.isObject() ? List.of(list) : array(list, "commitValidators")) {
            Rule rule = rule(entry);
            if (!"requireSiblingWhen".equals(rule.kind)) {
                throw new IllegalArgumentException("unknown commit validator rule " + rule.kind);
            }
            TableSchema table = table(schema, text(rule.body, "table"));
            out.add(new RequireSiblingRule(
                    table,
                    column(table, rule.body, "column"),
                    required(rule.body, "equals"),
                    text(rule.body, "siblingRowIdSuffix"),
                    code(rule.body)));
        }
        return out;
    }

    static List<ReactionPlanner> planners(JsonNode list, CompiledSchema schema) {
        List<ReactionPlanner> out = new ArrayList<>();
        for (JsonNode r : array(list, "reactions")) {
            TableSchema table = table(schema, text(r, "table"));
            String op = r.path("op").asText("upsert");
            if (!List.of("upsert", "delete", "any").contains(op)) {
                throw new IllegalArgumentException("reaction op must be upsert, delete or any");
            }
            JsonNode when = r.path("when");
            String whenColumn = when.isObject() ? column(table, when, "column") : null;
            JsonNode whenEquals = when.isObject() ? required(when, "equals") : null;
            int version = r.path("version").asInt(1);
            int maxAttempts = r.path("maxAttempts").asInt(PlannedReaction.DEFAULT_MAX_ATTEMPTS);
            ReactionRule rule = new ReactionRule(
                    table,
                    op,
                    whenColumn,
                    whenEquals,
                    r.path("everyWrite").asBoolean(false),
                    text(r, "type"),
                    version,
                    maxAttempts);
            new PlannedReaction(
                    "check", rule.type(), version, "{}", maxAttempts); // type, version, attempts checked now
            out.add(rule);
        }
        return out;
    }

    private record Rule(String kind, JsonNode body) {}

    /** {@code {"maxLength": {...}}} or {@code {"kind": "maxLength", ...}}. */
    private static Rule rule(JsonNode node) {
        if (!node.isObject()) {
            throw new IllegalArgumentException("a rule must be an object");
        }
        if (node.has("kind")) {
            return new Rule(node.get("kind").asText(), node);
        }
        if (node.size() != 1) {
            throw new IllegalArgumentException("a rule names exactly one kind");
        }
        String kind = node.fieldNames().next();
        return new Rule(kind, node.get(kind));
    }

    private static List<JsonNode> array(JsonNode node, String what) {
        if (node.isMissingNode() || node.isNull()) {
            return List.of();
        }
        if (!node.isArray()) {
            throw new IllegalArgumentException(what + " must be an array");
        }
        List<JsonNode> out = new ArrayList<>();
        node.forEach(out::add);
        return out;
    }

    private static TableSchema table(CompiledSchema schema, String name) {
        TableSchema t = schema.table(name);
        if (t == null) {
            throw new IllegalArgumentException("policy names an unknown table: " + name);
        }
        return t;
    }

    private static String column(TableSchema table, JsonNode node, String field) {
        String name = text(node, field);
        if (table.column(name) == null) {
            throw new IllegalArgumentException("policy names an unknown column: " + table.name() + "." + name);
        }
        return name;
    }

    private static String code(JsonNode node) {
        String code = text(node, "code");
        new ValidationRejection(code, null); // §6.7: a reserved prefix fails here, at load
        return code;
    }

    private static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || !v.isTextual() || v.asText().isEmpty()) {
            throw new IllegalArgumentException("policy rule needs a non-empty string \"" + field + "\"");
        }
        return v.asText();
    }

    private static int positive(JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || !v.canConvertToInt() || v.asInt() < 0) {
            throw new IllegalArgumentException("policy rule needs a non-negative integer \"" + field + "\"");
        }
        return v.asInt();
    }

    private static JsonNode required(JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null) {
            throw new IllegalArgumentException("policy rule needs \"" + field + "\"");
        }
        return v;
    }
}
