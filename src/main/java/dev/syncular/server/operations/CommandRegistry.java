package dev.syncular.server.operations;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/** The deployment's {@link RemoteCommand}s by operation id (REMOTE.md §1); two with one id stop the start-up. */
public final class CommandRegistry {
    private final Map<String, RemoteCommand> byId;

    public CommandRegistry(Iterable<RemoteCommand> commands) {
        Map<String, RemoteCommand> m = new LinkedHashMap<>();
        for (RemoteCommand c : commands) {
            String id = c.id();
            if (id == null || id.isBlank()) {
                throw new IllegalArgumentException(
                        "a remote command has no id: " + c.getClass().getName());
            }
            if (m.putIfAbsent(id, c) != null) {
                throw new IllegalArgumentException("two remote commands have the id " + id);
            }
        }
        this.byId = Map.copyOf(m);
    }

    public Optional<RemoteCommand> find(String operationId) {
        return Optional.ofNullable(byId.get(operationId));
    }

    /** The registered command ids. */
    public java.util.Set<String> ids() {
        return byId.keySet();
    }

    public int size() {
        return byId.size();
    }
}
