package dev.syncular.server.crdt.yjs;

import java.util.Objects;

/**
 * An item in a {@link YjsDoc}: content inserted by one client, linked between its current {@code left} and
 * {@code right} neighbours in its parent type's list (or, for a map entry, in the history of its
 * {@code parentSub} key). {@code origin} and {@code rightOrigin} are the ids it was inserted between;
 * {@code parent} is the {@link SharedType} once integrated (a {@link YjsId} or {@code null} before).
 * Integration itself is {@link ItemIntegrator}'s; this class splits, joins, deletes and collects an item and
 * writes it the way Yjs's {@code Item} does.
 */
final class DocItem extends DocStruct {
    YjsId origin;
    YjsId rightOrigin;
    DocItem left;
    DocItem right;
    Object parent;
    String parentSub;
    ItemContent content;
    /** The nested type this item holds, while its content is {@link ItemContent.Type}. */
    final SharedType type;

    boolean deleted;
    /** Fixed when the item is made, as Yjs keeps it (a collected item keeps the flag of its old content). */
    final boolean countable;

    DocItem(
            long client,
            long clock,
            YjsId origin,
            YjsId rightOrigin,
            Object parent,
            String parentSub,
            ItemContent content,
            SharedType type) {
        super(client, clock, content.length());
        this.origin = origin;
        this.rightOrigin = rightOrigin;
        this.parent = parent;
        this.parentSub = parentSub;
        this.content = content;
        this.type = type;
        this.countable = content.countable();
    }

    @Override
    boolean deleted() {
        return deleted;
    }

    YjsId lastId() {
        return new YjsId(client, clock + length - 1);
    }

    /** The type this item lives in (integrated items only). */
    SharedType parentType() {
        if (!(parent instanceof SharedType t)) {
            throw new YjsFormatException("item is not integrated");
        }
        return t;
    }

    /**
     * Cuts the item after {@code diff} ticks and returns the right part, linked in after this one; the right
     * part's origin is this part's last tick. Both halves of a split surrogate pair become U+FFFD.
     */
    DocItem split(Transaction tr, long diff) {
        DocItem r = new DocItem(
                client,
                clock + diff,
                new YjsId(client, clock + diff - 1),
                rightOrigin,
                parent,
                parentSub,
                content.sliceFrom(diff),
                null);
        content = content.sliceTo(diff);
        r.left = this;
        r.right = right;
        r.deleted = deleted;
        right = r;
        if (r.right != null) {
            r.right.left = r;
        }
        tr.mergeStructs.add(r);
        if (r.parentSub != null && r.right == null) {
            r.parentType().map.put(r.parentSub, r);
        }
        length = diff;
        return r;
    }

    /** Joins the next item of this client when it continues this one in every respect (Yjs's {@code mergeWith}). */
    @Override
    boolean mergeWith(DocStruct next) {
        if (!(next instanceof DocItem r)
                || !Objects.equals(r.origin, lastId())
                || right != r
                || !Objects.equals(rightOrigin, r.rightOrigin)
                || client != r.client
                || end() != r.clock
                || deleted != r.deleted
                || content.getClass() != r.content.getClass()) {
            return false;
        }
        ItemContent joined = content.joinedWith(r.content);
        if (joined == null) {
            return false;
        }
        content = joined;
        right = r.right;
        if (right != null) {
            right.left = this;
        }
        length += r.length;
        return true;
    }

    /** Marks the item deleted and records it in the transaction; a deleted type deletes its content too. */
    void delete(Transaction tr) {
        if (deleted) {
            return;
        }
        SharedType p = parentType();
        deleted = true;
        tr.deleteSet.add(client, clock, length);
        tr.addChanged(p);
        if (content instanceof ItemContent.Type) {
            type.deleteContent(tr);
        }
    }

    /**
     * Drops the content of a deleted item: it becomes deleted content of the same length, or a
     * garbage-collected run when its parent type is collected as well ({@code parentCollected}).
     */
    void gc(StructStore store, boolean parentCollected) {
        if (!deleted) {
            throw new YjsFormatException("collecting an item that is not deleted");
        }
        if (content instanceof ItemContent.Type) {
            type.collectContent(store);
        }
        if (parentCollected) {
            store.replace(this, new DocGc(client, clock, length));
        } else {
            content = new ItemContent.Deleted(length);
        }
    }

    @Override
    void write(Lib0Writer w) {
        Struct.Item.writeHead(w, content, origin, rightOrigin, parentSub);
        if (origin == null && rightOrigin == null) {
            if (parent instanceof SharedType t && t.item == null) {
                w.writeVarUint(1);
                w.writeVarString(t.rootName);
            } else {
                YjsId id = parent instanceof SharedType t ? t.item.id() : (YjsId) parent;
                w.writeVarUint(0);
                w.writeVarUint(id.client());
                w.writeVarUint(id.clock());
            }
            if (parentSub != null) {
                w.writeVarString(parentSub);
            }
        }
        content.write(w);
    }
}
