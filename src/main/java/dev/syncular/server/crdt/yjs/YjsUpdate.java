package dev.syncular.server.crdt.yjs;

import java.util.ArrayList;
import java.util.List;

/**
 * A decoded Yjs v1 update (the format of {@code Y.encodeStateAsUpdate} and {@code Y.mergeUpdates}): a count
 * of client groups, each {@code structCount, client, firstClock} followed by its structs, then the
 * {@link DeleteSet}. The structs keep the order they were read in, and {@code groups} keeps them as read per
 * group (a document reads an update group by group).
 */
record YjsUpdate(List<Struct> structs, List<Group> groups, DeleteSet deleteSet) {
    /** One client group: its client and its structs (possibly none). */
    record Group(long client, List<Struct> structs) {}

    private static final int BITS5 = 0x1f;
    private static final int BIT8 = 0x80;
    private static final int BIT7 = 0x40;
    private static final int BIT6 = 0x20;

    /** Empty bytes are the empty document, as a {@code null} stored value is (§5.10.1). */
    static YjsUpdate decode(byte[] bytes) {
        if (bytes == null || bytes.length == 0) {
            return new YjsUpdate(List.of(), List.of(), new DeleteSet());
        }
        Lib0Reader r = new Lib0Reader(bytes);
        List<Struct> structs = new ArrayList<>();
        List<Group> groups = new ArrayList<>();
        int groupCount = r.readLength();
        for (int g = 0; g < groupCount; g++) {
            int count = r.readLength();
            long client = r.readVarUint();
            long clock = r.readVarUint();
            List<Struct> group = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                Struct s = readStruct(r, client, clock);
                if (s.length() <= 0 || s.end() > Lib0Reader.MAX_SAFE) {
                    throw new YjsFormatException("struct length out of range");
                }
                group.add(s);
                clock = s.end();
            }
            structs.addAll(group);
            groups.add(new Group(client, group));
        }
        // bytes after the delete set are ignored, as Yjs ignores them
        return new YjsUpdate(structs, groups, DeleteSet.read(r));
    }

    private static Struct readStruct(Lib0Reader r, long client, long clock) {
        int info = r.readUint8();
        if ((info & BITS5) == Struct.SKIP_INFO) {
            return new Struct.Skip(client, clock, r.readVarUint());
        }
        if ((info & BITS5) == 0) {
            return new Struct.Gc(client, clock, r.readVarUint());
        }
        YjsId origin = (info & BIT8) != 0 ? new YjsId(r.readVarUint(), r.readVarUint()) : null;
        YjsId rightOrigin = (info & BIT7) != 0 ? new YjsId(r.readVarUint(), r.readVarUint()) : null;
        Object parent = null;
        String parentSub = null;
        if ((info & (BIT8 | BIT7)) == 0) {
            parent = r.readVarUint() == 1 ? r.readVarString() : new YjsId(r.readVarUint(), r.readVarUint());
            if ((info & BIT6) != 0) {
                parentSub = r.readVarString();
            }
        }
        return new Struct.Item(
                client, clock, origin, rightOrigin, parent, parentSub, ItemContent.read(info & BITS5, r));
    }
}
