package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.StorableText;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.ReqHeader;
import dev.syncular.server.wire.SubscriptionFrame;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * §1.7 request validation, after a successful decode: the reserved {@code clientId} namespace (§1.5), the
 * §6.1 operation cap, the §4.2 rows delivery accept bits, and the subscriptions (§4.1 ids, §3.2 rule 2).
 * Before any of it — before the round's first storage read — {@link #admissible}: the subscription cap and
 * the request-level text the storage must be able to hold ({@link StorableText}). A failure fails the whole
 * request with its {@link SyncError}.
 */
final class RequestValidation {
    /** §1.5: the reserved server-command namespace of {@code clientId}. */
    static final String REMOTE_COMMAND_PREFIX = "[\"remote-command\",";

    private RequestValidation() {}

    /**
     * Checked before the round touches storage: at most {@code maxSubscriptionsPerRequest} subscriptions, and
     * every identifier that becomes part of a storage key — partition and actor, {@code clientId}, each
     * {@code clientCommitId}, each subscription id and requested scope key and value — storable
     * ({@link StorableText#storableKey}). A violation is 400 {@code sync.invalid_request} naming the field in
     * {@code details} (never the value). Push operations' row ids and values are checked per operation
     * ({@code PushOperations}): a bad one rejects only its commit (§1.7 commit-level).
     */
    static void admissible(
            SyncRequestContext ctx,
            ReqHeader header,
            List<PushCommit> pushes,
            List<SubscriptionFrame> subs,
            SyncLimits limits) {
        if (subs.size() > limits.maxSubscriptionsPerRequest()) {
            throw new SyncError(
                    ErrorCode.INVALID_REQUEST,
                    "request carries too many subscriptions",
                    Map.of("subscriptions", subs.size(), "limit", limits.maxSubscriptionsPerRequest()));
        }
        SyncError unstorable = ctx.unstorable();
        if (unstorable != null) {
            throw unstorable;
        }
        requireKey(header.clientId(), "clientId", -1);
        for (int i = 0; i < pushes.size(); i++) {
            requireKey(pushes.get(i).clientCommitId(), "clientCommitId", i);
        }
        for (int i = 0; i < subs.size(); i++) {
            SubscriptionFrame s = subs.get(i);
            requireKey(s.id(), "subscription.id", i);
            requireKey(s.table(), "subscription.table", i);
            for (Map.Entry<String, List<String>> e : s.scopes().entrySet()) {
                requireKey(e.getKey(), "subscription.scopes", i);
                for (String v : e.getValue()) {
                    requireKey(v, "subscription.scopes", i);
                }
            }
        }
    }

    private static void requireKey(String value, String field, int index) {
        SyncError e = unstorableKey(value, field, index);
        if (e != null) {
            throw e;
        }
    }

    /** The refusal of an identifier the storage cannot key on, naming its field (never its value); else null. */
    static SyncError unstorableKey(String value, String field, int index) {
        if (StorableText.storableKey(value)) {
            return null;
        }
        return new SyncError(
                ErrorCode.INVALID_REQUEST,
                "identifier holds U+0000 or exceeds the length limit",
                index < 0
                        ? Map.of("field", field, "maxBytes", StorableText.MAX_KEY_BYTES)
                        : Map.of("field", field, "index", index, "maxBytes", StorableText.MAX_KEY_BYTES));
    }

    /** Request-level validation of §1.7 (after a successful decode). */
    static void validate(
            ReqHeader header,
            List<PushCommit> pushes,
            PullHeader pull,
            List<SubscriptionFrame> subs,
            CompiledSchema clientSchema,
            SyncLimits limits) {
        if (header.clientId().startsWith(REMOTE_COMMAND_PREFIX)) {
            throw new SyncError(ErrorCode.INVALID_CLIENT_ID, "clientId uses the reserved server-command namespace");
        }
        int ops = 0;
        for (PushCommit c : pushes) {
            ops += c.operations().size();
        }
        if (ops > limits.maxOperationsPerRequest()) {
            throw new SyncError(
                    ErrorCode.TOO_MANY_OPERATIONS,
                    "push exceeds the operation cap",
                    Map.of("operations", ops, "limit", limits.maxOperationsPerRequest()));
        }
        if (pull != null
                && !pull.accepts(PullHeader.ACCEPT_INLINE_ROWS)
                && !pull.accepts(PullHeader.ACCEPT_EXTERNAL_ROWS)) {
            throw new SyncError(ErrorCode.INVALID_REQUEST, "pull accepts no rows segment delivery");
        }
        Set<String> ids = new HashSet<>();
        for (SubscriptionFrame s : subs) {
            if (!ids.add(s.id())) {
                throw new SyncError(
                        ErrorCode.INVALID_SUBSCRIPTION, "duplicate subscription id", Map.of("subscriptionId", s.id()));
            }
            TableSchema table = clientSchema.table(s.table());
            if (table == null) {
                throw new SyncError(
                        ErrorCode.UNKNOWN_TABLE, "subscription names an unknown table", Map.of("table", s.table()));
            }
            EffectiveScopes.validateRequested(table, s.scopes());
        }
    }
}
