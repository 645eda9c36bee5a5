package dev.syncular.server.wire;

/** A {@code PUSH_RESULT} result record (§6.3) — a tagged union on {@code status}. */
public sealed interface OpResult permits OpResult.Applied, OpResult.Conflict, OpResult.Error {
    int STATUS_APPLIED = 1;
    int STATUS_CONFLICT = 2;
    int STATUS_ERROR = 3;

    int opIndex();

    void write(WireWriter w);

    record Applied(int opIndex) implements OpResult {
        @Override
        public void write(WireWriter w) {
            w.i32(opIndex).u8(STATUS_APPLIED);
        }
    }

    /** A conflict: the server row (full-row codec) and the {@code conflictColumns} presence-layout bitmap. */
    record Conflict(
            int opIndex, String code, String message, long serverVersion, byte[] serverRow, byte[] conflictColumns)
            implements OpResult {
        @Override
        public void write(WireWriter w) {
            w.i32(opIndex)
                    .u8(STATUS_CONFLICT)
                    .str(code)
                    .str(message)
                    .i64(serverVersion)
                    .bytes(serverRow)
                    .bytes(conflictColumns);
        }
    }

    record Error(int opIndex, String code, String message, boolean retryable) implements OpResult {
        @Override
        public void write(WireWriter w) {
            w.i32(opIndex).u8(STATUS_ERROR).str(code).str(message).bool(retryable);
        }
    }

    static OpResult read(WireReader r) {
        int opIndex = r.i32();
        int status = r.u8();
        switch (status) {
            case STATUS_APPLIED:
                return new Applied(opIndex);
            case STATUS_CONFLICT:
                return new Conflict(opIndex, r.str(), r.str(), r.i64(), r.bytes(), r.bytes());
            case STATUS_ERROR:
                return new Error(opIndex, r.str(), r.str(), r.bool());
            default:
                throw WireException.invalid("result record status byte out of range");
        }
    }
}
