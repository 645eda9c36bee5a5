package dev.syncular.server.policy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.sync.CandidateReader;
import dev.syncular.server.sync.CommitEvidence;
import dev.syncular.server.sync.CommitValidator;
import dev.syncular.server.sync.OperationEvidence;
import dev.syncular.server.sync.ValidationRejection;
import dev.syncular.server.wire.Json;
import io.smallrye.mutiny.Uni;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * A whole-commit validator (§6.8) answered by a webhook. The request body is the commit's operation evidence:
 *
 * <pre>{@code
 * {"partition", "actorId", "clientId", "clientCommitId",
 *  "operations": [{"opIndex", "op", "table", "rowId", "row", "stored", "storedServerVersion", "nextServerVersion"}]}
 * }</pre>
 *
 * rows as JSON objects by column name ({@code bytes} and {@code crdt} base64), plus the rows of the registered
 * queries {@code syncular.policy.validator-webhook.evidence} declares ({@link WebhookEvidence}: the body's and each
 * operation's {@code evidence} object, run in the push transaction before the call and signed with the rest).
 * Answers:
 * <ul>
 *   <li>2xx with {@code {"reject": {"code", "message"?, "opIndex"?, "details"?}}}: the commit is rejected with that
 *       host code (reserved prefixes and malformed details count as a host bug, below);</li>
 *   <li>any other 2xx: accepted;</li>
 *   <li>4xx or an unreadable 2xx body: a host bug — {@code sync.constraint_violation},
 *       {@code whole-commit validator failed};</li>
 *   <li>no answer within the timeouts, a connection failure, an answer above the size cap, a 5xx, or the circuit
 *       breaker open ({@link Webhook}): the round fails with {@code sync.internal_error} (retryable,
 *       {@code details.reason} naming which) and the commit never applies; nothing is persisted, so the client's
 *       retry asks again.</li>
 * </ul>
 *
 * <p>§6.8 runs the validator inside the commit's partition transaction, after the operations are staged and
 * before the commit is appended: the call holds the partition lock (and its pooled database connection) for its
 * whole duration, so every other writer of that partition waits behind it. {@code timeout} bounds that wait; the
 * breaker bounds it to nothing while the endpoint is known to be failing.
 */
final class WebhookValidator implements CommitValidator {
    private final Webhook webhook;
    private final CompiledSchema schema;
    private final LongSupplier clock;
    private final WebhookEvidence queries;

    WebhookValidator(Webhook webhook, CompiledSchema schema, LongSupplier clock, WebhookEvidence queries) {
        this.webhook = webhook;
        this.schema = schema;
        this.clock = clock;
        this.queries = queries;
    }

    @Override
    public Uni<Void> validate(CommitEvidence commit, CandidateReader read) {
        ObjectNode body = evidence(commit);
        if (queries.isEmpty()) {
            return call(body.toString());
        }
        // §6.7 / §6.8 queryAuthoritative, before the call: their rows are part of the signed body
        return queries.add(commit, read, body).chain(() -> call(body.toString()));
    }

    private Uni<Void> call(String body) {
        return webhook.post(body, Map.of(), clock.getAsLong())
                // details.reason: timeout, connect_timeout, connect_error, answer_too_large, io_error, or
                // circuit_open (the breaker failed the call at once); server_error for a 5xx below
                .onFailure()
                .transform(f -> unavailable(f instanceof Webhook.Failure w ? w.reason : "io_error"))
                .flatMap(answer -> {
                    if (answer.status() >= 500) {
                        return Uni.createFrom().failure(unavailable("server_error"));
                    }
                    if (answer.status() < 200 || answer.status() >= 300) {
                        return Uni.createFrom()
                                .failure(new IllegalStateException("validator webhook refused the call"));
                    }
                    JsonNode reject = parse(answer.body()).path("reject");
                    if (!reject.isObject()) {
                        return Uni.createFrom().voidItem();
                    }
                    Map<String, Object> details = reject.path("details").isObject()
                            ? Json.convertValue(reject.get("details"), LinkedHashMap.class)
                            : null;
                    return Uni.createFrom()
                            .failure(new ValidationRejection(
                                    reject.path("opIndex").asInt(-1),
                                    reject.path("code").asText(null),
                                    reject.path("message").asText(null),
                                    details));
                });
    }

    private static SyncError unavailable(String reason) {
        return new SyncError(ErrorCode.INTERNAL_ERROR, "validator webhook unavailable", Map.of("reason", reason));
    }

    private static JsonNode parse(String body) {
        if (body == null || body.isBlank()) {
            return Json.object();
        }
        try {
            return Json.readTree(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("validator webhook answered malformed JSON");
        }
    }

    private ObjectNode evidence(CommitEvidence commit) {
        ObjectNode o = Json.object()
                .put("partition", commit.partition())
                .put("actorId", commit.actorId())
                .put("clientId", commit.clientId())
                .put("clientCommitId", commit.clientCommitId());
        ArrayNode ops = o.putArray("operations");
        for (OperationEvidence e : commit.operations()) {
            var table = schema.table(e.table());
            ObjectNode op = ops.addObject()
                    .put("opIndex", e.opIndex())
                    .put("op", e.op())
                    .put("table", e.table())
                    .put("rowId", e.rowId());
            op.set("row", RuleValues.row(table, e.row()));
            op.set("stored", RuleValues.row(table, e.stored()));
            op.put("storedServerVersion", e.storedServerVersion());
            op.put("nextServerVersion", e.nextServerVersion());
        }
        return o;
    }
}
