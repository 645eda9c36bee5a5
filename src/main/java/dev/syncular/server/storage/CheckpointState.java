package dev.syncular.server.storage;

/** Lifecycle of a backfill checkpoint: {@code declared → backfilling → activated}. */
public enum CheckpointState {
    DECLARED("declared"),
    BACKFILLING("backfilling"),
    ACTIVATED("activated");

    public final String dbName;

    CheckpointState(String dbName) {
        this.dbName = dbName;
    }

    public static CheckpointState of(String dbName) {
        for (CheckpointState s : values()) {
            if (s.dbName.equals(dbName)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown checkpoint state");
    }
}
