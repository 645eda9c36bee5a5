package dev.syncular.server.sync;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The §5.10.2 merger registry: {@code crdtType -> merge function}. Its {@link #crdtTypes()} are what a
 * schema is compiled against (§5.10.1: an unknown {@code crdtType} is rejected before serving), and as a
 * {@link CrdtMerger} it answers {@code null} for a type it does not hold, which the push turns into
 * {@code sync.crdt_merge_failed}.
 */
public final class CrdtMergerRegistry implements CrdtMerger {
    private final Map<String, CrdtTypeMerger> mergers;

    private CrdtMergerRegistry(Map<String, CrdtTypeMerger> mergers) {
        this.mergers = Map.copyOf(mergers);
    }

    /**
     * The built-in mergers, then the host's: a host merger may replace a built-in of the same name, but two
     * host mergers may not claim one name.
     */
    public static CrdtMergerRegistry of(
            Collection<? extends CrdtTypeMerger> builtIn, Collection<? extends CrdtTypeMerger> host) {
        Map<String, CrdtTypeMerger> byType = new LinkedHashMap<>();
        for (CrdtTypeMerger m : builtIn) {
            byType.put(name(m), m);
        }
        Map<String, CrdtTypeMerger> hostTypes = new LinkedHashMap<>();
        for (CrdtTypeMerger m : host) {
            if (hostTypes.put(name(m), m) != null) {
                throw new SyncError(
                        ErrorCode.CRDT_MERGE_FAILED,
                        "two CRDT mergers are registered for one crdtType",
                        Map.of("crdtType", m.crdtType()));
            }
        }
        byType.putAll(hostTypes);
        return new CrdtMergerRegistry(byType);
    }

    private static String name(CrdtTypeMerger m) {
        String type = m.crdtType();
        if (type == null || type.isBlank()) {
            throw new SyncError(
                    ErrorCode.CRDT_MERGE_FAILED,
                    "a CRDT merger has no crdtType",
                    Map.of("merger", m.getClass().getName()));
        }
        return type;
    }

    /** The registered {@code crdtType} names. */
    public Set<String> crdtTypes() {
        return mergers.keySet();
    }

    @Override
    public byte[] merge(String crdtType, byte[] stored, byte[] incoming) {
        CrdtTypeMerger m = mergers.get(crdtType);
        return m == null ? null : m.merge(stored, incoming);
    }
}
