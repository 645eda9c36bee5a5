package dev.syncular.server.sync;

import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.schema.ScopePattern;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.storage.CommitQuery;
import dev.syncular.server.storage.StoredChange;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.RespHeader;
import dev.syncular.server.wire.RowCodec;
import dev.syncular.server.wire.SubEnd;
import dev.syncular.server.wire.SubStart;
import dev.syncular.server.wire.SubscriptionStatus;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The §8.2 realtime delta: a connection's registrations (§8.1 — the subscriptions its client record stores,
 * each resolved to its effective scopes, §3.2) and, for one committed log entry, the standalone SSP2 response
 * carrying {@code SUB_START} / {@code COMMIT} / {@code SUB_END} for every registration the commit touches. The
 * change filtering and row narrowing are {@link Pull}'s ({@code commitFrame}), exactly as an incremental pull
 * over the window {@code commitSeq - 1 < seq <= commitSeq} would deliver them.
 */
public final class RealtimeDelta {
    private RealtimeDelta() {}

    /**
     * One registered subscription of a connection, resolved: its table in the client's schema version, its
     * effective scopes and the scope keys (§3.1) they cover — the keys the connection is registered on.
     */
    public static final class Registration {
        final String id;
        final TableSchema table;
        final Map<String, List<String>> effective;
        final CommitQuery query;
        final RowCodec codec;
        final Set<String> scopeKeys;

        private Registration(String id, TableSchema table, Map<String, List<String>> effective) {
            this.id = id;
            this.table = table;
            this.effective = effective;
            this.query = new CommitQuery(table.name(), EffectiveScopes.asSets(effective), 0, 0, 1);
            this.codec = new RowCodec(table.rowLayout());
            Set<String> keys = new LinkedHashSet<>();
            for (ScopePattern p : table.scopePatterns()) {
                List<String> values = effective.get(p.variable());
                if (values != null) {
                    values.forEach(v -> keys.add(p.scopeKey(v)));
                }
            }
            this.scopeKeys = Collections.unmodifiableSet(keys);
        }

        public Set<String> scopeKeys() {
            return scopeKeys;
        }

        /**
         * Two registrations with the same id, the same table of the same schema version and the same effective
         * scopes give every commit the same frames ({@link #delta}): a fan-out encodes such a delta once.
         */
        @Override
        public boolean equals(Object o) {
            return o instanceof Registration r && r.table == table && r.id.equals(id) && r.effective.equals(effective);
        }

        @Override
        public int hashCode() {
            return (id.hashCode() * 31 + System.identityHashCode(table)) * 31 + effective.hashCode();
        }
    }

    /**
     * §8.1: the registrations of a client record's stored subscription list under the actor's allowed scopes
     * (§3.2 rule 3). A revoked subscription (§3.3), or one whose table or schema version the window no longer
     * serves, registers nothing — its next pull repairs it.
     */
    public static List<Registration> register(
            SchemaWindow window, String subscriptionsJson, Map<String, List<String>> allowed) {
        List<Registration> out = new ArrayList<>();
        for (ClientRecords.Registered r : ClientRecords.registered(subscriptionsJson)) {
            CompiledSchema schema = window.forVersion(r.schemaVersion());
            TableSchema table = schema == null ? null : schema.table(r.table());
            Map<String, List<String>> effective = table == null ? null : EffectiveScopes.effective(r.scopes(), allowed);
            if (effective != null) {
                out.add(new Registration(r.id(), table, effective));
            }
        }
        return out;
    }

    /** The scope keys (§3.1) a commit's changes are stored under, by the running schema's scope patterns. */
    public static Set<String> scopeKeys(SchemaWindow window, StoredCommit commit) {
        Set<String> keys = new LinkedHashSet<>();
        for (StoredChange ch : commit.changes()) {
            TableSchema table = window.current().table(ch.table());
            if (table == null) {
                continue;
            }
            for (ScopePattern p : table.scopePatterns()) {
                String v = ch.scopes().get(p.variable());
                if (v != null) {
                    keys.add(p.scopeKey(v));
                }
            }
        }
        return keys;
    }

    /**
     * The §8.2 delta of {@code commit} for {@code registrations}: {@code RESP_HEADER} (the log epoch, no reset),
     * then per affected registration {@code SUB_START} (active, its effective scopes), the {@code COMMIT} and
     * {@code SUB_END} with {@code nextCursor = commitSeq}; {@code null} when the commit touches none of them.
     */
    public static Message delta(String logEpoch, List<Registration> registrations, StoredCommit commit) {
        List<Frame> frames = new ArrayList<>();
        frames.add(new RespHeader(null, null, logEpoch, false));
        for (Registration r : registrations) {
            CommitFrame frame = Pull.commitFrame(r.table, r.codec, commit, r.query);
            if (frame != null) {
                frames.add(new SubStart(r.id, SubscriptionStatus.ACTIVE, "", r.effective, false));
                frames.add(frame);
                frames.add(new SubEnd(commit.commitSeq(), null));
            }
        }
        return frames.size() == 1 ? null : Message.response(frames);
    }
}
