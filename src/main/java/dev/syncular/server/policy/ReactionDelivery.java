package dev.syncular.server.policy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.observability.OperationalEvents;
import dev.syncular.server.observability.ReactionMetrics;
import dev.syncular.server.observability.WebhookMetrics;
import dev.syncular.server.storage.Reaction;
import dev.syncular.server.storage.ReactionStorage;
import dev.syncular.server.storage.ReactionStore;
import dev.syncular.server.sync.Tracing;
import dev.syncular.server.wire.Json;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.jboss.logging.Logger;

/**
 * The §6.9 delivery worker of this pod: every {@code syncular.reactions.poll-interval} it claims due reactions
 * (one statement, {@code FOR UPDATE SKIP LOCKED}: pods get disjoint rows) under a fresh lease-owner token and hands
 * each to its webhook (the {@code syncular.reactions.endpoints} entry listing its type, else
 * {@code syncular.reactions.webhook.url}: {@code ReactionEndpoints}), renewing its lease first (a row another worker
 * reclaimed meanwhile is skipped). Delivery is at least once: a pod that dies mid-call leaves the lease to expire
 * and another worker delivers again with the same {@code Idempotency-Key}.
 *
 * <p>The webhook gets {@code {"id", "type", "version", "payload", "idempotencyKey", "partition", "clientId",
 * "clientCommitId", "commitSeq", "attempt", "maxAttempts"}}. A 2xx completes the reaction; a 4xx other than 408
 * and 429 dead-letters it at once ({@code reaction.rejected}); anything else — another status
 * ({@code reaction.http_error}), a timeout ({@code reaction.timeout}), a connection failure
 * ({@code reaction.unreachable}) — is retried after {@code min(max-backoff, initial-backoff × 2^(attempt − 1))}
 * until {@code maxAttempts}, then dead-lettered. Terminal rows past their retention are deleted, at most 1,000 per
 * pass, at most once a minute per pod. Completions, retries and dead letters appear in the admin event tail
 * ({@code reaction.completed}, {@code reaction.retried}, {@code reaction.dead_lettered}).
 */
@ApplicationScoped
public class ReactionDelivery {
    private static final Logger LOG = Logger.getLogger(ReactionDelivery.class);
    private static final long PRUNE_EVERY_MS = 60_000;
    private static final AttributeKey<String> REACTION_TYPE = AttributeKey.stringKey("syncular.reaction.type");
    private final ReactionStore store;
    private final ReactionsConfig config;
    private final ReactionEndpoints endpoints;
    private final AtomicLong lastPrune = new AtomicLong();
    private final OperationalEvents events;
    private final ReactionMetrics metrics;
    /** A root span per delivery attempt ({@code reaction.deliver}); its webhook call is the child. */
    private final Tracing tracing;

    @Inject
    public ReactionDelivery(
            ReactionStorage storage,
            ReactionsConfig config,
            Vertx vertx,
            OperationalEvents events,
            ReactionMetrics metrics,
            WebhookMetrics webhooks,
            Tracing tracing) {
        this.tracing = tracing;
        this.events = events;
        this.metrics = metrics;
        this.store = storage.reactions();
        this.config = config;
        this.endpoints = new ReactionEndpoints(vertx, webhooks, this.config, tracing);
    }

    void close(@Observes ShutdownEvent event) {
        endpoints.close();
    }

    // not once shutdown has begun: a pass started then would finish after the application's contexts are gone
    @Scheduled(
            every = "${syncular.reactions.poll-interval:1s}",
            concurrentExecution = Scheduled.ConcurrentExecution.SKIP,
            skipExecutionIf = Scheduled.ApplicationNotRunning.class)
    Uni<Void> run() {
        if (!endpoints.any()) {
            return Uni.createFrom().voidItem();
        }
        return runOnce(System.currentTimeMillis())
                .replaceWithVoid()
                .onFailure()
                .invoke(e -> LOG.warn("reaction delivery pass failed", e))
                .onFailure()
                .recoverWithNull();
    }

    /** One pass: claims a batch and delivers it; yields how many were delivered (completed). */
    public Uni<Integer> runOnce(long nowMs) {
        String owner = UUID.randomUUID().toString(); // §6.9: a fresh lease-owner token per runner call
        long leaseMs = config.lease().toMillis();
        return prune(nowMs)
                .flatMap(v -> store.countUndelivered())
                .invoke(metrics::pending)
                .flatMap(v -> store.claim(owner, nowMs, leaseMs, config.batchSize(), endpoints.claimable()))
                .flatMap(claimed -> Multi.createFrom()
                        .iterable(claimed)
                        .onItem()
                        .transformToUniAndConcatenate(r -> deliver(r, owner, leaseMs))
                        .collect()
                        .asList())
                .map(results ->
                        (int) results.stream().filter(Boolean::booleanValue).count());
    }

    private Uni<Boolean> deliver(Reaction r, String owner, long leaseMs) {
        return tracing.span("reaction.deliver", Context.root(), SpanKind.INTERNAL, trace -> {
            Span.fromContext(trace).setAttribute(REACTION_TYPE, r.type());
            return deliver(r, owner, leaseMs, trace);
        });
    }

    private Uni<Boolean> deliver(Reaction r, String owner, long leaseMs, Context trace) {
        long now = System.currentTimeMillis();
        return store.renew(r.id(), owner, now + leaseMs).flatMap(held -> {
            if (!held) {
                return Uni.createFrom().item(false); // another worker reclaimed it
            }
            if (r.attempts() > r.maxAttempts()) { // a worker died during the last attempt
                metrics.deadLettered(r.type());
                return store.fail(r.id(), owner, "reaction.attempts_exhausted", null, now, null)
                        .map(x -> false);
            }
            long started = System.nanoTime();
            Uni<Webhook.Answer> call;
            try (Scope ignored = trace.makeCurrent()) { // the webhook's span and traceparent: this delivery's child
                call = endpoints.forType(r.type()).post(body(r), Map.of("Idempotency-Key", r.idempotencyKey()), now);
            }
            return call.map(answer -> answer.status() >= 200 && answer.status() < 300
                            ? null
                            : failure(
                                    answer.status() >= 400
                                                    && answer.status() < 500
                                                    && answer.status() != 408
                                                    && answer.status() != 429
                                            ? "reaction.rejected"
                                            : "reaction.http_error",
                                    answer.status()))
                    .onFailure()
                    .recoverWithItem(f -> failure(
                            f instanceof TimeoutException || f instanceof Webhook.Failure w && w.timeout()
                                    ? "reaction.timeout"
                                    : "reaction.unreachable",
                            null))
                    .flatMap(failure -> record(r, owner, failure, System.nanoTime() - started));
        });
    }

    private record Failure(String code, Integer status) {}

    private static Failure failure(String code, Integer status) {
        return new Failure(code, status);
    }

    private Uni<Boolean> record(Reaction r, String owner, Failure failure, long callNanos) {
        long now = System.currentTimeMillis();
        if (failure == null) {
            metrics.attempted(r.type(), ReactionMetrics.Outcome.DELIVERED, callNanos);
            return store.complete(r.id(), owner, now).invoke(done -> {
                if (done) {
                    events.reaction("reaction.completed", null, r.partition(), r.id(), r.type(), r.attempts());
                }
            });
        }
        String details = failure.status() == null
                ? null
                : Json.object().put("status", failure.status()).toString();
        boolean permanent = failure.code().equals("reaction.rejected") || r.attempts() >= r.maxAttempts();
        Long retryAt = permanent ? null : now + backoffMs(r.attempts());
        metrics.attempted(
                r.type(),
                permanent ? ReactionMetrics.Outcome.DEAD_LETTERED : ReactionMetrics.Outcome.RETRIED,
                callNanos);
        if (permanent) {
            LOG.warnf("reaction %d (%s) dead-lettered: %s", r.id(), r.type(), failure.code());
        }
        events.reaction(
                permanent ? "reaction.dead_lettered" : "reaction.retried",
                failure.code(),
                r.partition(),
                r.id(),
                r.type(),
                r.attempts());
        return store.fail(r.id(), owner, failure.code(), details, now, retryAt).map(x -> false);
    }

    /** §6.9: {@code min(maxBackoff, initialBackoff × 2^(attempt − 1))}. */
    long backoffMs(int attempt) {
        long initial = config.initialBackoff().toMillis();
        long max = config.maxBackoff().toMillis();
        int shift = Math.min(Math.max(attempt - 1, 0), 30);
        return Math.min(max, initial << shift);
    }

    private Uni<Void> prune(long nowMs) {
        long last = lastPrune.get();
        if (nowMs - last < PRUNE_EVERY_MS || !lastPrune.compareAndSet(last, nowMs)) {
            return Uni.createFrom().voidItem();
        }
        return store.prune(
                        nowMs - config.completedRetention().toMillis(),
                        nowMs - config.deadLetterRetention().toMillis(),
                        1000)
                .invoke(p -> {
                    if (p.completed() + p.deadLettered() > 0) {
                        LOG.infof(
                                "reaction retention removed %d completed and %d dead-lettered reactions",
                                p.completed(), p.deadLettered());
                    }
                })
                .replaceWithVoid();
    }

    private static String body(Reaction r) {
        ObjectNode o = Json.object().put("id", r.id()).put("type", r.type()).put("version", r.version());
        try {
            o.set("payload", Json.readTree(r.payloadJson()));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored reaction payload is not JSON", e);
        }
        o.put("idempotencyKey", r.idempotencyKey())
                .put("partition", r.partition())
                .put("clientId", r.clientId())
                .put("clientCommitId", r.clientCommitId())
                .put("commitSeq", r.commitSeq())
                .put("attempt", r.attempts())
                .put("maxAttempts", r.maxAttempts());
        return o.toString();
    }

    /** Reactions for the admin API. */
    public ReactionStore store() {
        return store;
    }
}
