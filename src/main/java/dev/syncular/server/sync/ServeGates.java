package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.storage.CheckpointDeclaration;
import dev.syncular.server.storage.ServeGate;
import dev.syncular.server.storage.StoredCheckpoint;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The serve-gate decision (§2.4, §10.2 {@code sync.schema_not_ready}): a process refuses a partition when
 * the stored schema is newer than its build, or when a checkpoint at its running version is pending that
 * it did not declare itself — the declaring process may serve while it backfills. Refusal details name the
 * partition and the checkpoint or the two schema versions; the message never does.
 */
public final class ServeGates {
    /** Refusal reasons, also the {@code reason} tag of the refusal counter. */
    public static final String SCHEMA_NEWER = "schema_newer";

    public static final String CHECKPOINT_PENDING = "checkpoint_pending";
    public static final String GATE_CHANGED = "gate_changed";
    public static final String WRITER_FENCED = "writer_fenced";

    private final int runningSchemaVersion;
    private final Set<String> declared;

    public ServeGates(int runningSchemaVersion, List<CheckpointDeclaration> declarations) {
        this.runningSchemaVersion = runningSchemaVersion;
        this.declared =
                declarations.stream().map(d -> key(d.partition(), d.name())).collect(Collectors.toUnmodifiableSet());
    }

    private static String key(String partition, String name) {
        return partition + '\u0000' + name;
    }

    public int runningSchemaVersion() {
        return runningSchemaVersion;
    }

    public boolean declaredHere(String partition, String name) {
        return declared.contains(key(partition, name));
    }

    /** The refusal for this gate, or {@code null} when the partition may be served. */
    public SyncError refusal(String partition, ServeGate gate) {
        if (gate.storedSchemaVersion() > runningSchemaVersion) {
            return schemaNewer(partition, gate.storedSchemaVersion());
        }
        for (StoredCheckpoint c : gate.pending()) {
            if (!declaredHere(partition, c.name())) {
                return checkpointPending(partition, c);
            }
        }
        return null;
    }

    /** Read-verify-refuse: the gate after planning must still admit and carry the same token. */
    public SyncError verify(String partition, ServeGate before, ServeGate after) {
        SyncError refusal = refusal(partition, after);
        if (refusal != null) {
            return refusal;
        }
        if (before.tokenChanged(after)) {
            Map<String, Object> d = new LinkedHashMap<>();
            d.put("reason", GATE_CHANGED);
            d.put("partition", partition);
            d.put("storedSchemaVersion", after.storedSchemaVersion());
            d.put("runningSchemaVersion", runningSchemaVersion);
            return new SyncError(ErrorCode.SCHEMA_NOT_READY, "storage changed while the request was served", d);
        }
        return null;
    }

    public SyncError schemaNewer(String partition, int stored) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("reason", SCHEMA_NEWER);
        d.put("partition", partition);
        d.put("storedSchemaVersion", stored);
        d.put("runningSchemaVersion", runningSchemaVersion);
        return new SyncError(ErrorCode.SCHEMA_NOT_READY, "stored schema is newer than this server", d);
    }

    public SyncError checkpointPending(String partition, StoredCheckpoint c) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("reason", CHECKPOINT_PENDING);
        d.put("partition", partition);
        d.put("checkpoint", c.name());
        d.put("schemaVersion", c.schemaVersion());
        d.put("state", c.state().dbName);
        return new SyncError(ErrorCode.SCHEMA_NOT_READY, "a backfill checkpoint is not activated", d);
    }

    public SyncError writerFenced(String partition) {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("reason", WRITER_FENCED);
        d.put("partition", partition);
        d.put("runningSchemaVersion", runningSchemaVersion);
        return new SyncError(ErrorCode.SCHEMA_NOT_READY, "this server's schema is fenced from writing", d);
    }
}
