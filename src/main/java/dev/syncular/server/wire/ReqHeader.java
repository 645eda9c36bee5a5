package dev.syncular.server.wire;

/** {@code REQ_HEADER} (§1.5): {@code clientId}, {@code schemaVersion ≥ 1}, and the client's {@code logEpoch} (absent = acquisition, §2.1). */
public record ReqHeader(String clientId, int schemaVersion, String logEpoch) implements Frame {
    @Override
    public int type() {
        return FrameType.REQ_HEADER;
    }

    static ReqHeader read(WireReader r) {
        String clientId = r.str();
        int schemaVersion = r.i32();
        String logEpoch = r.optStr();
        r.expectEnd();
        if (clientId.isEmpty()) {
            throw WireException.invalid("clientId must be non-empty");
        }
        if (schemaVersion < 1) {
            throw WireException.invalid("schemaVersion must be at least 1");
        }
        return new ReqHeader(clientId, schemaVersion, logEpoch);
    }

    @Override
    public void writePayload(WireWriter w) {
        w.str(clientId).i32(schemaVersion).optStr(logEpoch);
    }
}
