package dev.syncular.server.wire;

import java.util.List;
import java.util.Map;

/**
 * {@code SUBSCRIPTION} (§4.3): id, table, requested scopes, host-opaque {@code params} (raw JSON),
 * cursor ({@code -1} = never synced) and the round-tripped {@code bootstrapState} resume token (raw JSON).
 */
public record SubscriptionFrame(
        String id, String table, Map<String, List<String>> scopes, String params, long cursor, String bootstrapState)
        implements Frame {
    @Override
    public int type() {
        return FrameType.SUBSCRIPTION;
    }

    static SubscriptionFrame read(WireReader r) {
        String id = r.str();
        String table = r.str();
        Map<String, List<String>> scopes = r.scopeListMap();
        String params = r.optJson();
        long cursor = r.i64();
        String bootstrapState = r.optJson();
        r.expectEnd();
        return new SubscriptionFrame(id, table, scopes, params, cursor, bootstrapState);
    }

    @Override
    public void writePayload(WireWriter w) {
        w.str(id).str(table).scopeListMap(scopes).optStr(params).i64(cursor).optStr(bootstrapState);
    }
}
