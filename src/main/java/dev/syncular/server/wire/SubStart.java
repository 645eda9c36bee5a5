package dev.syncular.server.wire;

import java.util.List;
import java.util.Map;

/** {@code SUB_START} (§4.4): opens a subscription section. */
public record SubStart(
        String id,
        SubscriptionStatus status,
        String reasonCode,
        Map<String, List<String>> effectiveScopes,
        boolean bootstrap)
        implements Frame {
    @Override
    public int type() {
        return FrameType.SUB_START;
    }

    static SubStart read(WireReader r) {
        String id = r.str();
        SubscriptionStatus status = SubscriptionStatus.of(r.u8());
        String reasonCode = r.str();
        Map<String, List<String>> scopes = r.scopeListMap();
        boolean bootstrap = r.bool();
        r.expectEnd();
        return new SubStart(id, status, reasonCode, scopes, bootstrap);
    }

    @Override
    public void writePayload(WireWriter w) {
        w.str(id).u8(status.code).str(reasonCode).scopeListMap(effectiveScopes).bool(bootstrap);
    }
}
