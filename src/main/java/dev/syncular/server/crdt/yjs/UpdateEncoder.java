package dev.syncular.server.crdt.yjs;

import java.util.ArrayList;
import java.util.List;

/**
 * Writes structs, in the order given, as a Yjs v1 update: consecutive structs of one client form a group
 * ({@code structCount, client, firstClock, structs...}); a client that comes back after another starts a new
 * group, as Yjs's lazy writer does. {@link #finish} prefixes the group count and appends the delete set.
 */
final class UpdateEncoder {
    private final List<byte[]> groups = new ArrayList<>();
    private final List<Integer> counts = new ArrayList<>();
    private Lib0Writer current;
    private long currentClient;
    private int written;
    private int totalBytes;

    void write(Struct s) {
        if (written > 0 && currentClient != s.client()) {
            flush();
        }
        if (written == 0) {
            current = new Lib0Writer(64);
            currentClient = s.client();
            current.writeVarUint(s.client());
            current.writeVarUint(s.clock());
        }
        s.write(current);
        written++;
    }

    private void flush() {
        if (written > 0) {
            byte[] g = current.toBytes();
            groups.add(g);
            counts.add(written);
            totalBytes += g.length;
            written = 0;
            current = null;
        }
    }

    byte[] finish(DeleteSet ds) {
        flush();
        Lib0Writer w = new Lib0Writer(totalBytes + 16 + 5 * groups.size());
        w.writeVarUint(groups.size());
        for (int i = 0; i < groups.size(); i++) {
            w.writeVarUint(counts.get(i));
            w.writeBytes(groups.get(i));
        }
        ds.write(w);
        return w.toBytes();
    }
}
