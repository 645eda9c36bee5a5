package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.TableSchema;
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
 * A failure fails the whole request with its {@link SyncError}.
 */
final class RequestValidation {
    /** §1.5: the reserved server-command namespace of {@code clientId}. */
    static final String REMOTE_COMMAND_PREFIX = "[\"remote-command\",";

    private RequestValidation() {
    }

    /** Request-level validation of §1.7 (after a successful decode). */
    static void validate(ReqHeader header, List<PushCommit> pushes, PullHeader pull, List<SubscriptionFrame> subs,
            CompiledSchema clientSchema, SyncLimits limits) {
        if (header.clientId().startsWith(REMOTE_COMMAND_PREFIX)) {
            throw new SyncError(ErrorCode.INVALID_CLIENT_ID, "clientId uses the reserved server-command namespace");
        }
        int ops = 0;
        for (PushCommit c : pushes) {
            ops += c.operations().size();
        }
        if (ops > limits.maxOperationsPerRequest()) {
            throw new SyncError(ErrorCode.TOO_MANY_OPERATIONS, "push exceeds the operation cap",
                    Map.of("operations", ops, "limit", limits.maxOperationsPerRequest()));
        }
        if (pull != null && !pull.accepts(PullHeader.ACCEPT_INLINE_ROWS) && !pull.accepts(PullHeader.ACCEPT_EXTERNAL_ROWS)) {
            throw new SyncError(ErrorCode.INVALID_REQUEST, "pull accepts no rows segment delivery");
        }
        Set<String> ids = new HashSet<>();
        for (SubscriptionFrame s : subs) {
            if (!ids.add(s.id())) {
                throw new SyncError(ErrorCode.INVALID_SUBSCRIPTION, "duplicate subscription id",
                        Map.of("subscriptionId", s.id()));
            }
            TableSchema table = clientSchema.table(s.table());
            if (table == null) {
                throw new SyncError(ErrorCode.UNKNOWN_TABLE, "subscription names an unknown table",
                        Map.of("table", s.table()));
            }
            EffectiveScopes.validateRequested(table, s.scopes());
        }
    }
}
