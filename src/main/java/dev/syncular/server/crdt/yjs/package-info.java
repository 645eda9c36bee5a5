/**
 * The built-in {@code yjs-doc} CRDT merger (§5.10) in plain Java: a codec for Yjs v1 updates and the
 * update merge of {@code Y.mergeUpdates}, written from the Yjs 13.6 update format (MIT licence) without a
 * Yjs dependency, so the server core stays free of CRDT libraries (§5.10.2).
 *
 * <ul>
 *   <li>lib0 primitives: {@code Lib0Reader}, {@code Lib0Writer}, {@code YjsAny} (self-describing values);</li>
 *   <li>the update: {@code YjsUpdate} (decode), {@code Struct} (item, garbage-collected run, skip),
 *       {@code ItemContent} (the nine content kinds), {@code YjsId}, {@code DeleteSet}, {@code UpdateEncoder};</li>
 *   <li>the merge: {@link dev.syncular.server.crdt.yjs.UpdateMerger}; the registry entry:
 *       {@link dev.syncular.server.crdt.yjs.YjsDocMerger}; malformed bytes:
 *       {@link dev.syncular.server.crdt.yjs.YjsFormatException}.</li>
 * </ul>
 *
 * <p>May depend on {@code sync} (the {@code CrdtTypeMerger} seam) only; never on storage, the Quarkus edge or
 * a CRDT library.
 */
package dev.syncular.server.crdt.yjs;
