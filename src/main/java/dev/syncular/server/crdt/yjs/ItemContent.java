package dev.syncular.server.crdt.yjs;

import java.util.ArrayList;
import java.util.List;

/**
 * The content of an item struct, selected by the low five bits of the struct's info byte: deleted (1), JSON
 * (2), binary (3), string (4), embed (5), format (6), type (7), any (8) and subdocument (9). Its length is
 * the number of clock ticks the item spans; string length counts UTF-16 code units, as Yjs does. Only the
 * kinds that can span more than one tick can be split ({@link #sliceFrom}, {@link #sliceTo}) and joined
 * ({@link #joinedWith}); deleted and format content is not countable (it takes no index in its parent).
 */
sealed interface ItemContent {
    int ref();

    long length();

    void write(Lib0Writer w);

    /** The part from {@code offset} on, for an item whose start another update already supplied. */
    ItemContent sliceFrom(long offset);

    /** The part before {@code offset}: the left half when a document splits an item. */
    default ItemContent sliceTo(long offset) {
        throw unsplittable();
    }

    /** This content followed by {@code right} (same kind), or {@code null} for kinds that never join. */
    default ItemContent joinedWith(ItemContent right) {
        return null;
    }

    /** Whether the content takes index positions in its parent (Yjs's {@code isCountable}). */
    default boolean countable() {
        return true;
    }

    static ItemContent read(int ref, Lib0Reader r) {
        switch (ref) {
            case 1:
                return new Deleted(r.readVarUint());
            case 2: {
                int n = r.readLength();
                List<String> values = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    String v = r.readVarString();
                    values.add(v.equals("undefined") ? v : JsJson.canonical(v));
                }
                return new Json(values);
            }
            case 3:
                return new Binary(r.readVarBytes());
            case 4:
                return new Str(r.readVarString());
            case 5:
                return new Embed(JsJson.canonical(r.readVarString()));
            case 6:
                return new Format(r.readVarString(), JsJson.canonical(r.readVarString()));
            case 7: {
                int typeRef = (int) Math.min(r.readVarUint(), Integer.MAX_VALUE);
                if (typeRef > Type.XML_TEXT) {
                    throw new YjsFormatException("unknown shared type reference");
                }
                String name = Type.hasName(typeRef) ? r.readVarString() : null;
                return new Type(typeRef, name);
            }
            case 8: {
                int n = r.readLength();
                List<Object> values = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    values.add(YjsAny.read(r));
                }
                return new Any(values);
            }
            case 9:
                return SubdocOptions.read(r);
            default:
                throw new YjsFormatException("unknown item content reference");
        }
    }

    private static YjsFormatException unsplittable() {
        return new YjsFormatException("content of length one cannot be split");
    }

    /** Content of a deleted item that no longer holds its values (ref 1). */
    record Deleted(long len) implements ItemContent {
        public int ref() {
            return 1;
        }

        public long length() {
            return len;
        }

        public void write(Lib0Writer w) {
            w.writeVarUint(len);
        }

        public ItemContent sliceFrom(long offset) {
            return new Deleted(len - offset);
        }

        @Override
        public ItemContent sliceTo(long offset) {
            return new Deleted(offset);
        }

        @Override
        public ItemContent joinedWith(ItemContent right) {
            return new Deleted(len + right.length());
        }

        @Override
        public boolean countable() {
            return false;
        }
    }

    /** Legacy JSON values, each kept as canonical JSON text ({@link JsJson}) or {@code undefined} (ref 2). */
    record Json(List<String> values) implements ItemContent {
        public int ref() {
            return 2;
        }

        public long length() {
            return values.size();
        }

        public void write(Lib0Writer w) {
            w.writeVarUint(values.size());
            for (String v : values) {
                w.writeVarString(v);
            }
        }

        public ItemContent sliceFrom(long offset) {
            return new Json(new ArrayList<>(values.subList((int) offset, values.size())));
        }

        @Override
        public ItemContent sliceTo(long offset) {
            return new Json(new ArrayList<>(values.subList(0, (int) offset)));
        }

        @Override
        public ItemContent joinedWith(ItemContent right) {
            List<String> joined = new ArrayList<>(values);
            joined.addAll(((Json) right).values);
            return new Json(joined);
        }
    }

    /** One byte array (ref 3). */
    record Binary(byte[] bytes) implements ItemContent {
        public int ref() {
            return 3;
        }

        public long length() {
            return 1;
        }

        public void write(Lib0Writer w) {
            w.writeVarBytes(bytes);
        }

        public ItemContent sliceFrom(long offset) {
            throw unsplittable();
        }
    }

    /** Text (ref 4). Splitting inside a surrogate pair replaces both halves of it with U+FFFD, as Yjs does. */
    record Str(String text) implements ItemContent {
        public int ref() {
            return 4;
        }

        public long length() {
            return text.length();
        }

        public void write(Lib0Writer w) {
            w.writeVarString(text);
        }

        public ItemContent sliceFrom(long offset) {
            String right = text.substring((int) offset);
            if (Character.isHighSurrogate(text.charAt((int) offset - 1)) && !right.isEmpty()) {
                right = '\ufffd' + right.substring(1);
            }
            return new Str(right);
        }

        @Override
        public ItemContent sliceTo(long offset) {
            String left = text.substring(0, (int) offset);
            if (Character.isHighSurrogate(left.charAt(left.length() - 1))) {
                left = left.substring(0, left.length() - 1) + '\ufffd';
            }
            return new Str(left);
        }

        @Override
        public ItemContent joinedWith(ItemContent right) {
            return new Str(text.concat(((Str) right).text));
        }
    }

    /** A rich-text embed, its canonical JSON text (ref 5). */
    record Embed(String json) implements ItemContent {
        public int ref() {
            return 5;
        }

        public long length() {
            return 1;
        }

        public void write(Lib0Writer w) {
            w.writeVarString(json);
        }

        public ItemContent sliceFrom(long offset) {
            throw unsplittable();
        }
    }

    /** A rich-text formatting mark: key and canonical JSON value (ref 6). */
    record Format(String key, String json) implements ItemContent {
        public int ref() {
            return 6;
        }

        public long length() {
            return 1;
        }

        public void write(Lib0Writer w) {
            w.writeVarString(key);
            w.writeVarString(json);
        }

        public ItemContent sliceFrom(long offset) {
            throw unsplittable();
        }

        @Override
        public boolean countable() {
            return false;
        }
    }

    /**
     * A nested shared type (ref 7): array 0, map 1, text 2, XML element 3 (with its node name), XML fragment
     * 4, XML hook 5 (with its hook name), XML text 6.
     */
    record Type(int typeRef, String name) implements ItemContent {
        static final int XML_ELEMENT = 3;
        static final int XML_HOOK = 5;
        static final int XML_TEXT = 6;

        static boolean hasName(int typeRef) {
            return typeRef == XML_ELEMENT || typeRef == XML_HOOK;
        }

        public int ref() {
            return 7;
        }

        public long length() {
            return 1;
        }

        public void write(Lib0Writer w) {
            w.writeVarUint(typeRef);
            if (name != null) {
                w.writeVarString(name);
            }
        }

        public ItemContent sliceFrom(long offset) {
            throw unsplittable();
        }
    }

    /** lib0 "any" values, one clock tick each (ref 8): array elements and map values. */
    record Any(List<Object> values) implements ItemContent {
        public int ref() {
            return 8;
        }

        public long length() {
            return values.size();
        }

        public void write(Lib0Writer w) {
            w.writeVarUint(values.size());
            for (Object v : values) {
                YjsAny.write(w, v);
            }
        }

        public ItemContent sliceFrom(long offset) {
            return new Any(new ArrayList<>(values.subList((int) offset, values.size())));
        }

        @Override
        public ItemContent sliceTo(long offset) {
            return new Any(new ArrayList<>(values.subList(0, (int) offset)));
        }

        @Override
        public ItemContent joinedWith(ItemContent right) {
            List<Object> joined = new ArrayList<>(values);
            joined.addAll(((Any) right).values);
            return new Any(joined);
        }
    }

    /** A subdocument: its guid and options (ref 9). */
    record Doc(String guid, Object options) implements ItemContent {
        public int ref() {
            return 9;
        }

        public long length() {
            return 1;
        }

        public void write(Lib0Writer w) {
            w.writeVarString(guid);
            YjsAny.write(w, options);
        }

        public ItemContent sliceFrom(long offset) {
            throw unsplittable();
        }
    }
}
