package dev.syncular.server.policy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.operations.QueryDefinition;
import dev.syncular.server.operations.QueryRegistry;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.sync.CandidateReader;
import dev.syncular.server.sync.CommitEvidence;
import dev.syncular.server.sync.OperationEvidence;
import dev.syncular.server.wire.Json;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The registered queries whose results the validator webhook receives as evidence, run inside the push
 * transaction (SPEC §6.7 / §6.8 {@code queryAuthoritative}: the commit's partition, its candidate state), declared
 * by {@code syncular.policy.validator-webhook.evidence}, a JSON array:
 *
 * <pre>{@code
 * [{"name": "membership", "query": "listMembership", "table": "todos",
 *   "params": {"listId": {"row": "list_id"}, "actorId": {"context": "actorId"}, "role": "owner"}},
 *  {"name": "openLists", "query": "sha256:<hex>/openLists", "params": {}}]
 * }</pre>
 *
 * <ul>
 *   <li>{@code name}: the key the rows go under; {@code query}: a registered query's operation id or bare name;</li>
 *   <li>{@code table}: run once per operation on that table, with the operation's row (the final row of an upsert,
 *       the stored row of a delete; a delete of an absent row runs nothing); the rows go into that operation's
 *       {@code evidence.<name>}. Without {@code table}: once per commit, into the body's {@code evidence.<name>};</li>
 *   <li>{@code params}: each input of the query, a JSON constant, {@code {"row": "<column>"}} (the operation's
 *       column; only with {@code table}) or {@code {"context": "actorId" | "clientId" | "clientCommitId"}}.</li>
 * </ul>
 *
 * Rows are JSON objects keyed by result column ({@code bytes} as base64). Every name, query, table, column and input
 * is checked at start-up. A query that fails (an invalid param value, a result above its {@code maxRows}, a
 * failing statement) is a host bug like a refusing endpoint: the commit is rejected with
 * {@code sync.constraint_violation}, {@code whole-commit validator failed}, and no call is made.
 */
final class WebhookEvidence {
    static final WebhookEvidence NONE = new WebhookEvidence(List.of());
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final Set<String> CONTEXT = Set.of("actorId", "clientId", "clientCommitId");

    /** One input's source: a constant, a column of the operation's row, or a field of the commit. */
    record Param(Object constant, String column, String context) {}

    /** One declared query; {@code table} {@code ""} = once per commit. */
    record Query(String name, String query, String table, Map<String, Param> params) {}

    private final List<Query> queries;

    WebhookEvidence(List<Query> queries) {
        this.queries = List.copyOf(queries);
    }

    boolean isEmpty() {
        return queries.isEmpty();
    }

    /** The declaration {@code json}, checked against the schema and the registry. */
    static WebhookEvidence parse(String json, CompiledSchema schema, QueryRegistry registry) {
        JsonNode doc;
        try {
            doc = Json.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("is not JSON");
        }
        if (doc == null || !doc.isArray()) {
            throw new IllegalArgumentException("must be a JSON array");
        }
        List<Query> out = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (JsonNode e : doc) {
            String name = e.path("name").asText("");
            if (!e.isObject() || name.isEmpty() || !names.add(name)) {
                throw new IllegalArgumentException("every entry needs a name, once: " + e);
            }
            String operation = e.path("query").asText("");
            QueryDefinition query = registry.findByIdOrName(operation)
                    .orElseThrow(() -> new IllegalArgumentException(
                            name + ": no registered query " + operation + " (or its name is not unique)"));
            String tableName = e.path("table").asText("");
            TableSchema table = null;
            if (!tableName.isEmpty()) {
                table = schema.table(tableName);
                if (table == null) {
                    throw new IllegalArgumentException(name + ": unknown table " + tableName);
                }
            }
            Map<String, Param> params = new LinkedHashMap<>();
            JsonNode given = e.path("params");
            if (!given.isMissingNode() && !given.isObject()) {
                throw new IllegalArgumentException(name + ": params must be an object");
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = given.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> p = it.next();
                if (query.inputs().stream().noneMatch(i -> i.name().equals(p.getKey()))) {
                    throw new IllegalArgumentException(name + ": " + query.name() + " has no input " + p.getKey());
                }
                params.put(p.getKey(), param(name, table, p.getValue()));
            }
            out.add(new Query(name, operation, tableName, params));
        }
        return new WebhookEvidence(out);
    }

    private static Param param(String name, TableSchema table, JsonNode v) {
        if (v.isObject() && v.size() == 1 && v.has("row")) {
            String column = v.get("row").asText("");
            if (table == null || table.column(column) == null) {
                throw new IllegalArgumentException(name + ": {\"row\": ...} needs a table and one of its columns");
            }
            return new Param(null, column, null);
        }
        if (v.isObject() && v.size() == 1 && v.has("context")) {
            String field = v.get("context").asText("");
            if (!CONTEXT.contains(field)) {
                throw new IllegalArgumentException(name + ": context must be actorId, clientId or clientCommitId");
            }
            return new Param(null, null, field);
        }
        if (v.isTextual()) {
            return new Param(v.asText(), null, null);
        }
        if (v.isIntegralNumber() && v.canConvertToLong()) {
            return new Param(v.asLong(), null, null);
        }
        if (v.isNumber()) {
            return new Param(v.asDouble(), null, null);
        }
        if (v.isBoolean()) {
            return new Param(v.asBoolean(), null, null);
        }
        if (v.isNull()) {
            return new Param(null, null, null);
        }
        throw new IllegalArgumentException(name + ": a param is a constant, {\"row\": column} or {\"context\": field}");
    }

    /**
     * Runs the declared queries, one after the other on the transaction, and adds their rows to {@code body}: the
     * commit-level ones under {@code evidence}, the per-operation ones under each operation's {@code evidence}
     * ({@code body.operations[i]} is {@code commit.operations().get(i)}).
     */
    Uni<Void> add(CommitEvidence commit, CandidateReader read, ObjectNode body) {
        Uni<Void> chain = Uni.createFrom().voidItem();
        ArrayNode ops = (ArrayNode) body.get("operations");
        for (Query q : queries) {
            if (q.table().isEmpty()) {
                chain = chain.chain(() -> read.queryAuthoritative(q.query(), values(q, commit, null))
                        .invoke(rows -> section(body, q.name(), rows))
                        .replaceWithVoid());
                continue;
            }
            for (int i = 0; i < commit.operations().size(); i++) {
                OperationEvidence op = commit.operations().get(i);
                Map<String, Object> row = op.row() != null ? op.row() : op.stored();
                if (!op.table().equals(q.table()) || row == null) {
                    continue;
                }
                ObjectNode target = (ObjectNode) ops.get(i);
                chain = chain.chain(() -> read.queryAuthoritative(q.query(), values(q, commit, row))
                        .invoke(rows -> section(target, q.name(), rows))
                        .replaceWithVoid());
            }
        }
        return chain;
    }

    private static Map<String, Object> values(Query q, CommitEvidence commit, Map<String, Object> row) {
        Map<String, Object> out = new LinkedHashMap<>();
        q.params().forEach((input, p) -> {
            Object v;
            if (p.column() != null) {
                v = row.get(p.column());
            } else if (p.context() != null) {
                v = switch (p.context()) {
                    case "actorId" -> commit.actorId();
                    case "clientId" -> commit.clientId();
                    default -> commit.clientCommitId();
                };
            } else {
                v = p.constant();
            }
            out.put(input, v);
        });
        return out;
    }

    private static void section(ObjectNode target, String name, List<Map<String, Object>> rows) {
        ObjectNode evidence =
                target.has("evidence") ? (ObjectNode) target.get("evidence") : target.putObject("evidence");
        ArrayNode list = evidence.putArray(name);
        for (Map<String, Object> r : rows) {
            ObjectNode o = list.addObject();
            r.forEach((k, v) -> o.set(k, json(v)));
        }
    }

    private static JsonNode json(Object v) {
        if (v == null) {
            return F.nullNode();
        }
        if (v instanceof byte[] b) {
            return F.textNode(Base64.getEncoder().encodeToString(b));
        }
        if (v instanceof Long l) {
            return F.numberNode(l);
        }
        if (v instanceof Double d) {
            return F.numberNode(d);
        }
        if (v instanceof Boolean b) {
            return F.booleanNode(b);
        }
        return F.textNode(v.toString());
    }
}
