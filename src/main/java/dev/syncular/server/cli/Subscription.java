package dev.syncular.server.cli;

import dev.syncular.server.wire.SubscriptionFrame;
import dev.syncular.server.wire.SubscriptionStatus;
import java.util.List;
import java.util.Map;

/**
 * One subscription of a client (§4.3) and its durable progress: the cursor ({@code -1} until the first
 * complete round) and the bootstrap resume token, both taken from {@code SUB_END} only (§1.4), plus the last
 * {@code SUB_START} status and reason code.
 */
public final class Subscription {
    public final String id;
    public final String table;
    public final Map<String, List<String>> scopes;
    public long cursor = -1;
    public String bootstrapState;
    public SubscriptionStatus status;
    public String reasonCode;

    public Subscription(String id, String table, Map<String, List<String>> scopes) {
        this.id = id;
        this.table = table;
        this.scopes = scopes;
    }

    /** The {@code SUBSCRIPTION} frame of the next request. */
    public SubscriptionFrame frame() {
        return new SubscriptionFrame(id, table, scopes, null, cursor, bootstrapState);
    }

    /** Forgets the progress: the next round bootstraps again (§2.1 epoch change, §3.3 revocation, §4.6 reset). */
    public void restart() {
        cursor = -1;
        bootstrapState = null;
    }
}
