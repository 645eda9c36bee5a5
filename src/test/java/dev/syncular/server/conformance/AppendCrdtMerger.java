package dev.syncular.server.conformance;

import dev.syncular.server.sync.CrdtTypeMerger;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Arrays;

/**
 * A host-supplied merger (the §5.10.2 SPI) that the test build registers as a CDI bean: crdtType
 * {@code test-append} keeps every pushed byte string once, in first-arrival order. It exists to show a team's
 * own merger reaching the production registry; it is not a CRDT a real schema should use.
 */
@ApplicationScoped
public class AppendCrdtMerger implements CrdtTypeMerger {
    @Override
    public String crdtType() {
        return "test-append";
    }

    @Override
    public byte[] merge(byte[] stored, byte[] incoming) {
        if (stored == null) {
            return incoming;
        }
        if (Arrays.equals(stored, incoming)) {
            return stored;
        }
        byte[] out = Arrays.copyOf(stored, stored.length + incoming.length);
        System.arraycopy(incoming, 0, out, stored.length, incoming.length);
        return out;
    }
}
