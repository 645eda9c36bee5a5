package dev.syncular.server.operations;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.storage.SyncStorage;
import dev.syncular.server.sync.ScopeResolver;
import dev.syncular.server.sync.ServerCommand;
import dev.syncular.server.sync.SyncEngine;
import dev.syncular.server.sync.SyncRequestContext;
import dev.syncular.server.sync.Tracing;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.smallrye.mutiny.Uni;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * One remote operation message (REMOTE.md §5), from the decoded request to the encoded response: the request
 * shape (revision 1, {@code kind}, {@code clientId}, {@code operationId}, {@code params}; no other member), the
 * identity binding (§1: a reserved {@code ["remote-command",} client id, or one bound to another actor of the
 * partition, is {@code sync.invalid_client_id}), the registry lookup ({@code operation.unknown}), §2.1
 * authorization before any SQL, then {@link QueryExecutor}. Every failure is answered as the encoded
 * {@code kind: "error"} object with its §7 code and {@code retryable}; an unexpected one is
 * {@code operation.execution_failed} (logged, its message never answered).
 */
public final class RemoteOperations {
    private static final Logger LOG = Logger.getLogger(RemoteOperations.class);
    public static final String RESERVED_CLIENT_PREFIX = "[\"remote-command\",";
    private static final Set<String> QUERY_MEMBERS = Set.of("revision", "kind", "clientId", "operationId", "params");
    private static final Set<String> COMMAND_MEMBERS =
            Set.of("revision", "kind", "clientId", "operationId", "requestId", "params");

    private final QueryRegistry registry;
    private final QueryExecutor executor;
    private final CompiledSchema schema;
    private final ScopeResolver resolver;
    private final QueryAuthorizer authorizer;
    private final SyncStorage storage;
    private final CommandRegistry commands;
    private final SyncEngine engine;
    private final OperationObserver observer;
    /** A span per answered request ({@code operation}), the parent of a command's round. */
    private final Tracing tracing;

    public RemoteOperations(
            QueryRegistry registry,
            QueryExecutor executor,
            CompiledSchema schema,
            ScopeResolver resolver,
            QueryAuthorizer authorizer,
            SyncStorage storage,
            CommandRegistry commands,
            SyncEngine engine,
            OperationObserver observer,
            Tracing tracing) {
        this.tracing = tracing;
        this.observer = observer;
        this.commands = commands;
        this.engine = engine;
        this.registry = registry;
        this.executor = executor;
        this.schema = schema;
        this.resolver = resolver;
        this.authorizer = authorizer;
        this.storage = storage;
    }

    /** The encoded response to one encoded request; never fails (failures are encoded). */
    public Uni<byte[]> handle(SyncRequestContext ctx, byte[] message) {
        return tracing.span("operation", Context.current(), SpanKind.INTERNAL, trace -> handle(ctx, message, trace));
    }

    private Uni<byte[]> handle(SyncRequestContext ctx, byte[] message, Context trace) {
        long start = System.nanoTime();
        String[] operation = {OperationObserver.UNREGISTERED};
        Uni<OperationValue> answer;
        try {
            answer = dispatch(ctx, TaggedValueCodec.decode(message), operation, trace);
        } catch (RuntimeException e) {
            answer = Uni.createFrom().failure(e);
        }
        return answer.onItemOrFailure().transform((ok, failure) -> {
            OperationValue out = failure == null ? ok : error(failure);
            String outcome = outcome(out);
            Span.fromContext(trace)
                    .setAttribute(Tracing.OPERATION, operation[0])
                    .setAttribute(Tracing.PARTITION, ctx.partition())
                    .setAttribute(Tracing.OUTCOME, outcome);
            observer.answered(operation[0], OperationObserver.Binding.HTTP, outcome, System.nanoTime() - start);
            if (!outcome.equals(OperationObserver.OK)) {
                observer.failed(operation[0], OperationObserver.Binding.HTTP, outcome, ctx.partition());
            }
            return TaggedValueCodec.encode(out);
        });
    }

    /** The outcome tag of an answer: {@link OperationObserver#OK} or the code of a {@code kind: "error"} answer. */
    static String outcome(OperationValue answer) {
        if (answer instanceof OperationValue.Obj o && o.get("code") instanceof OperationValue.Text code) {
            return code.value();
        }
        return OperationObserver.OK;
    }

    /**
     * The metrics tag of {@code operationId}: the id when a query or a command is registered with it, else
     * {@link OperationObserver#UNREGISTERED} (a closed set: the registries are fixed at start-up).
     */
    public String operationTag(String operationId) {
        return registry.find(operationId).isPresent()
                        || commands.find(operationId).isPresent()
                ? operationId
                : OperationObserver.UNREGISTERED;
    }

    /** Reports one watch answer (REMOTE.md §6) to the observer. */
    public void watchAnswered(String operationId, OperationValue answer, long nanos) {
        observer.answered(operationTag(operationId), OperationObserver.Binding.WATCH, outcome(answer), nanos);
    }

    private Uni<OperationValue> dispatch(
            SyncRequestContext ctx, OperationValue decoded, String[] operation, Context trace) {
        if (!(decoded instanceof OperationValue.Obj request)) {
            throw OperationException.invalid("the request must be an object");
        }
        OperationValue revision = request.get("revision");
        if (!(revision instanceof OperationValue.Number n && n.value() == 1)
                && !(revision instanceof OperationValue.Integer i && i.value() == 1)) {
            throw OperationException.invalid("revision must be 1");
        }
        String kind = string(request, "kind");
        if (!kind.equals("query") && !kind.equals("command")) {
            throw OperationException.invalid("kind must be query or command");
        }
        Set<String> members = kind.equals("query") ? QUERY_MEMBERS : COMMAND_MEMBERS;
        if (!members.equals(request.fields().keySet())) {
            throw OperationException.invalid("the request has missing or unknown members");
        }
        String clientId = string(request, "clientId");
        String operationId = string(request, "operationId");
        String requestId = kind.equals("command") ? string(request, "requestId") : "";
        if (kind.equals("command") && requestId.isEmpty()) {
            throw OperationException.invalid("requestId must be non-empty");
        }
        operation[0] = operationTag(operationId);
        if (clientId.isEmpty() || clientId.startsWith(RESERVED_CLIENT_PREFIX) || clientId.indexOf('\u0000') >= 0) {
            throw new OperationException(OperationErrorCode.INVALID_CLIENT_ID, "clientId is empty or reserved");
        }
        if (kind.equals("command")) {
            RemoteCommand command = commands.find(operationId)
                    .orElseThrow(() -> new OperationException(
                            OperationErrorCode.UNKNOWN, "no command is registered with this id"));
            return command(ctx, clientId, operationId, requestId, command, request.get("params"), trace);
        }
        return query(ctx, clientId, operationId, request.get("params"));
    }

    /**
     * The registered query {@code operationId} for {@code clientId} with {@code params} — identity binding
     * (§1), lookup, §2.1 authorization before any SQL, execution — as the §5 success object
     * ({@code kind: "query"}); a failure is an {@link OperationException} (or unexpected). The HTTP binding and
     * every watch run and rerun (§6: "the same query and authorization path as HTTP") go through here.
     */
    public Uni<OperationValue> query(
            SyncRequestContext ctx, String clientId, String operationId, OperationValue params) {
        return Uni.createFrom().deferred(() -> runQuery(ctx, clientId, operationId, params));
    }

    private Uni<OperationValue> runQuery(
            SyncRequestContext ctx, String clientId, String operationId, OperationValue params) {
        if (clientId.isEmpty() || clientId.startsWith(RESERVED_CLIENT_PREFIX) || clientId.indexOf('\u0000') >= 0) {
            throw new OperationException(OperationErrorCode.INVALID_CLIENT_ID, "clientId is empty or reserved");
        }
        QueryDefinition query = registry.find(operationId)
                .orElseThrow(() ->
                        new OperationException(OperationErrorCode.UNKNOWN, "no query is registered with this id"));
        QueryBinding binding = QueryBinding.of(query, params);
        return storage.readClient(ctx.partition(), clientId)
                .chain(client -> {
                    if (client != null && !client.actorId().equals(ctx.actorId())) {
                        throw new OperationException(
                                OperationErrorCode.INVALID_CLIENT_ID, "clientId belongs to another actor");
                    }
                    return authorize(ctx, clientId, query, binding);
                })
                .chain(() -> executor.run(ctx.partition(), query, binding))
                .map(result -> {
                    Map<String, OperationValue> out = new LinkedHashMap<>();
                    out.put("revision", new OperationValue.Number(1));
                    out.put("kind", new OperationValue.Text("query"));
                    out.put("operationId", new OperationValue.Text(query.id()));
                    out.put("rows", new OperationValue.Array(new ArrayList<>(result.rows())));
                    out.put("maxCommitSeq", new OperationValue.Number(result.maxCommitSeq()));
                    return new OperationValue.Obj(out);
                });
    }

    /**
     * REMOTE.md §3: identity binding, the command's own authorization, then one push round under the reserved
     * identity {@code ["remote-command", actorId, clientId]} / {@code [operationId, requestId]}, answered with the
     * commit's status ({@code applied}, {@code cached} for a retry, {@code rejected}), {@code commitSeq} and its
     * per-operation results.
     */
    private Uni<OperationValue> command(
            SyncRequestContext ctx,
            String clientId,
            String operationId,
            String requestId,
            RemoteCommand command,
            OperationValue params,
            Context trace) {
        RemoteCommand.Call call = new RemoteCommand.Call(
                operationId, requestId, ctx.actorId(), ctx.partition(), clientId, CommandParams.plain(params));
        String reservedClient = CommandParams.jsonArray(List.of("remote-command", ctx.actorId(), clientId));
        String reservedCommit = CommandParams.jsonArray(List.of(operationId, requestId));
        return storage.readClient(ctx.partition(), clientId)
                .chain(client -> {
                    if (client != null && !client.actorId().equals(ctx.actorId())) {
                        throw new OperationException(
                                OperationErrorCode.INVALID_CLIENT_ID, "clientId belongs to another actor");
                    }
                    return Uni.createFrom()
                            .deferred(() -> command.authorize(call))
                            .onFailure()
                            .transform(e -> {
                                LOG.warnf("command authorizer failed for %s: %s", operationId, e.toString());
                                return new OperationException(
                                        OperationErrorCode.EXECUTION_FAILED, "command authorization failed");
                            });
                })
                .chain(allowed -> {
                    if (!Boolean.TRUE.equals(allowed)) {
                        throw new OperationException(
                                OperationErrorCode.FORBIDDEN, "the command's authorization denies it");
                    }
                    return engine.command(
                            ctx, reservedClient, reservedCommit, new CommandRun(command, call, schema), trace);
                })
                .onFailure(ServerCommand.NoMutations.class)
                .transform(e -> OperationException.invalid(e.getMessage()))
                .map(frames -> CommandParams.answer(operationId, requestId, frames));
    }

    private Uni<Void> authorize(SyncRequestContext ctx, String clientId, QueryDefinition query, QueryBinding binding) {
        if (query.access() == QueryDefinition.Access.PRIVILEGED) {
            return authorizer
                    .authorize(new QueryAuthorizer.Request(
                            query.name(), query.id(), ctx.actorId(), ctx.partition(), clientId, binding.params()))
                    .onFailure()
                    .transform(e -> {
                        LOG.warnf("query authorizer failed for %s: %s", query.name(), e.toString());
                        return new OperationException(
                                OperationErrorCode.EXECUTION_FAILED, "query authorization failed");
                    })
                    .map(allowed -> {
                        if (!Boolean.TRUE.equals(allowed)) {
                            throw new OperationException(
                                    OperationErrorCode.FORBIDDEN, "the query authorizer denies this query");
                        }
                        return null;
                    });
        }
        return resolver.resolveScopes(ctx)
                .onFailure()
                .transform(e -> new OperationException(
                        OperationErrorCode.FORBIDDEN, "live scope authorization is unavailable for this query"))
                .map(allowed -> {
                    ScopeCoverage.check(query, schema, binding.params(), allowed == null ? Map.of() : allowed);
                    return null;
                });
    }

    private static String string(OperationValue.Obj request, String member) {
        if (!(request.get(member) instanceof OperationValue.Text t)) {
            throw OperationException.invalid("request member " + member + " must be a string");
        }
        return t.value();
    }

    /** The registered query's tables (REMOTE.md §6: a commit touching one of them reruns a watch). */
    public Optional<List<String>> tablesOf(String operationId) {
        return registry.find(operationId).map(QueryDefinition::tables);
    }

    /** The §5 {@code kind: "error"} object of {@code failure} (unexpected failures logged, never answered). */
    public static OperationValue error(Throwable failure) {
        OperationErrorCode code;
        String message;
        if (failure instanceof OperationException e) {
            code = e.code();
            message = e.getMessage();
        } else {
            LOG.warnf("remote operation failed unexpectedly: %s", failure.toString());
            code = OperationErrorCode.EXECUTION_FAILED;
            message = "the operation failed unexpectedly";
        }
        Map<String, OperationValue> out = new LinkedHashMap<>();
        out.put("revision", new OperationValue.Number(1));
        out.put("kind", new OperationValue.Text("error"));
        out.put("code", new OperationValue.Text(code.code));
        out.put("message", new OperationValue.Text(message));
        out.put("retryable", new OperationValue.Bool(code.retryable));
        return new OperationValue.Obj(out);
    }
}
