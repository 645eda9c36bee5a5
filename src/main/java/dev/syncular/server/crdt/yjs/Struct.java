package dev.syncular.server.crdt.yjs;

/**
 * One struct of an update: a run of {@link #length()} consecutive clock ticks of one client, starting at
 * {@link #clock()}. An {@link Item} carries content, a {@link Gc} marks garbage-collected ticks, a
 * {@link Skip} marks ticks the update does not have (a gap a merge had to leave open).
 */
sealed interface Struct {
    /** Info byte of a garbage-collected run. */
    int GC_INFO = 0;
    /** Info byte of a skipped run. */
    int SKIP_INFO = 10;

    long client();

    long clock();

    long length();

    default long end() {
        return clock() + length();
    }

    void write(Lib0Writer w);

    /** The part from {@code offset} ticks on ({@code 0 < offset < length}). */
    Struct sliceFrom(long offset);

    /** A run of ticks without content ({@link Gc}, {@link Skip}): written as its info byte and its length. */
    abstract sealed class Run implements Struct permits Gc, Skip {
        private final long client;
        private final long clock;
        long length;

        Run(long client, long clock, long length) {
            this.client = client;
            this.clock = clock;
            this.length = length;
        }

        public long client() {
            return client;
        }

        public long clock() {
            return clock;
        }

        public long length() {
            return length;
        }

        abstract int info();

        abstract Run run(long clock, long length);

        public void write(Lib0Writer w) {
            w.writeUint8(info());
            w.writeVarUint(length);
        }

        public Struct sliceFrom(long offset) {
            return run(clock + offset, length - offset);
        }
    }

    /** Garbage-collected ticks; adjacent runs merge into one. */
    final class Gc extends Run {
        Gc(long client, long clock, long length) {
            super(client, clock, length);
        }

        void extend(long ticks) {
            length += ticks;
        }

        int info() {
            return GC_INFO;
        }

        Run run(long clock, long length) {
            return new Gc(client(), clock, length);
        }
    }

    /** Ticks missing from the update. */
    final class Skip extends Run {
        Skip(long client, long clock, long length) {
            super(client, clock, length);
        }

        /** Narrowing below one tick only happens on updates whose clocks run backwards: refused. */
        void setLength(long length) {
            if (length <= 0) {
                throw new YjsFormatException("struct clocks out of order");
            }
            this.length = length;
        }

        int info() {
            return SKIP_INFO;
        }

        Run run(long clock, long length) {
            return new Skip(client(), clock, length);
        }
    }

    /**
     * Inserted content. {@code origin} and {@code rightOrigin} are the neighbours it was inserted between;
     * only an item with neither names its {@code parent} (a root type's name, a {@link String}, or the
     * {@link YjsId} of the type item it lives in) and, for a map entry, its {@code parentSub} key.
     */
    record Item(
            long client,
            long clock,
            YjsId origin,
            YjsId rightOrigin,
            Object parent,
            String parentSub,
            ItemContent content)
            implements Struct {
        private static final int BIT8 = 0x80;
        private static final int BIT7 = 0x40;
        private static final int BIT6 = 0x20;

        public long length() {
            return content.length();
        }

        /**
         * The head every item starts with, in an update and in a document's state alike: the info byte (content
         * ref, which origins follow, whether a parentSub does) and the origins present.
         */
        static void writeHead(Lib0Writer w, ItemContent content, YjsId origin, YjsId rightOrigin, String parentSub) {
            w.writeUint8((content.ref() & 0x1f)
                    | (origin == null ? 0 : BIT8)
                    | (rightOrigin == null ? 0 : BIT7)
                    | (parentSub == null ? 0 : BIT6));
            if (origin != null) {
                w.writeVarUint(origin.client());
                w.writeVarUint(origin.clock());
            }
            if (rightOrigin != null) {
                w.writeVarUint(rightOrigin.client());
                w.writeVarUint(rightOrigin.clock());
            }
        }

        public void write(Lib0Writer w) {
            writeHead(w, content, origin, rightOrigin, parentSub);
            if (origin == null && rightOrigin == null) {
                if (parent instanceof String key) {
                    w.writeVarUint(1);
                    w.writeVarString(key);
                } else if (parent instanceof YjsId id) {
                    w.writeVarUint(0);
                    w.writeVarUint(id.client());
                    w.writeVarUint(id.clock());
                } else {
                    throw new YjsFormatException("item without origin or parent");
                }
                if (parentSub != null) {
                    w.writeVarString(parentSub);
                }
            }
            content.write(w);
        }

        /** The right part: its origin is the tick before it, as if it had been typed after it. */
        public Struct sliceFrom(long offset) {
            return new Item(
                    client,
                    clock + offset,
                    new YjsId(client, clock + offset - 1),
                    rightOrigin,
                    parent,
                    parentSub,
                    content.sliceFrom(offset));
        }
    }
}
