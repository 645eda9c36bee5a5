package dev.syncular.server.sync;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.syncular.server.crdt.yjs.YjsDocMerger;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.errors.SyncError;
import dev.syncular.server.schema.SchemaException;
import dev.syncular.server.schema.SchemaLoader;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The §5.10.2 registry: built-in and host mergers by crdtType, and the schema compiled against its names. */
class CrdtMergerRegistryTest {
    private static CrdtTypeMerger named(String type, byte[] result) {
        return new CrdtTypeMerger() {
            public String crdtType() {
                return type;
            }

            public byte[] merge(byte[] stored, byte[] incoming) {
                return result;
            }
        };
    }

    private static final String SCHEMA = "{\"version\":1,\"tables\":[{\"name\":\"t\",\"primaryKey\":\"id\","
            + "\"scopes\":[\"t:{id}\"],\"columns\":[{\"name\":\"id\",\"type\":\"string\",\"nullable\":false},"
            + "{\"name\":\"d\",\"type\":\"crdt\",\"nullable\":true,\"crdtType\":\"TYPE\"}]}]}";

    @Test
    void builtInAndHostMergersByType() {
        CrdtMergerRegistry r =
                CrdtMergerRegistry.of(List.of(new YjsDocMerger()), List.of(named("rga", new byte[] {7})));
        assertEquals(Set.of("yjs-doc", "rga"), r.crdtTypes());
        assertArrayEquals(new byte[] {7}, r.merge("rga", null, new byte[] {1}));
        assertArrayEquals(new byte[] {0, 0}, r.merge("yjs-doc", null, new byte[0]), "the empty Yjs update");
        assertNull(r.merge("none", null, new byte[] {1}), "no merger: the push answers sync.crdt_merge_failed");
    }

    @Test
    void aHostMergerMayReplaceABuiltInButTwoMayNotShareAName() {
        CrdtMergerRegistry r =
                CrdtMergerRegistry.of(List.of(new YjsDocMerger()), List.of(named("yjs-doc", new byte[] {9})));
        assertArrayEquals(new byte[] {9}, r.merge("yjs-doc", null, new byte[] {1}));
        SyncError e = assertThrows(
                SyncError.class, () -> CrdtMergerRegistry.of(List.of(), List.of(named("x", null), named("x", null))));
        assertEquals(ErrorCode.CRDT_MERGE_FAILED, e.code());
        assertEquals("x", e.details().get("crdtType"));
        assertThrows(SyncError.class, () -> CrdtMergerRegistry.of(List.of(), List.of(named(" ", null))));
    }

    @Test
    void schemasCompileAgainstTheRegisteredTypes() {
        CrdtMergerRegistry r = CrdtMergerRegistry.of(List.of(new YjsDocMerger()), List.of(named("rga", null)));
        assertEquals(
                "rga",
                SchemaLoader.parse(SCHEMA.replace("TYPE", "rga"), r.crdtTypes())
                        .table("t")
                        .column("d")
                        .crdtType());
        SchemaException e = assertThrows(
                SchemaException.class, () -> SchemaLoader.parse(SCHEMA.replace("TYPE", "automerge"), r.crdtTypes()));
        assertEquals("crdt_type_unknown", e.reason());
    }
}
