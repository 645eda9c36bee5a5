package dev.syncular.server.wire;

/**
 * {@code RESP_HEADER} (§1.6): the schema-floor fields, the partition {@code logEpoch} (§2.1) and
 * {@code resetRequired}.
 */
public record RespHeader(
        Integer requiredSchemaVersion, Integer latestSchemaVersion, String logEpoch, boolean resetRequired)
        implements Frame {
    @Override
    public int type() {
        return FrameType.RESP_HEADER;
    }

    static RespHeader read(WireReader r) {
        Integer required = r.optI32();
        Integer latest = r.optI32();
        String logEpoch = r.str();
        boolean resetRequired = r.bool();
        r.expectEnd();
        return new RespHeader(required, latest, logEpoch, resetRequired);
    }

    @Override
    public void writePayload(WireWriter w) {
        w.optI32(requiredSchemaVersion)
                .optI32(latestSchemaVersion)
                .str(logEpoch)
                .bool(resetRequired);
    }
}
