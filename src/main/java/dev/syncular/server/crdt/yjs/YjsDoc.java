package dev.syncular.server.crdt.yjs;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A minimal Yjs document (garbage collection on, as in {@code new Y.Doc()}): just enough of Yjs 13.6 to apply
 * v1 updates ({@link UpdateApplier}) and encode the state ({@link StateEncoder}) byte for byte as Yjs does.
 * Root types are created on first reference by name. Changes run in transactions; the outermost one is
 * cleaned up when it ends ({@link TransactionCleanup}), followed by any transaction a cleanup started.
 */
final class YjsDoc {
    final StructStore store = new StructStore();
    private final Map<String, SharedType> roots = new HashMap<>();
    private final List<Transaction> cleanups = new ArrayList<>();
    private Transaction current;

    SharedType root(String name) {
        return roots.computeIfAbsent(name, n -> new SharedType(n, SharedType.ROOT));
    }

    /** Runs {@code body} in the current transaction, or in a new one that is cleaned up afterwards. */
    void transact(boolean local, Consumer<Transaction> body) {
        if (current != null) {
            body.accept(current);
            return;
        }
        Transaction tr = new Transaction(this, local);
        current = tr;
        cleanups.add(tr);
        try {
            body.accept(tr);
        } finally {
            current = null;
        }
        if (cleanups.get(0) == tr) {
            for (int i = 0; i < cleanups.size(); i++) { // a cleanup may start another transaction
                TransactionCleanup.run(cleanups.get(i));
            }
            cleanups.clear();
        }
    }

    void applyUpdate(byte[] update) {
        UpdateApplier.apply(this, update);
    }

    byte[] encodeStateAsUpdate() {
        return StateEncoder.encode(store);
    }
}
