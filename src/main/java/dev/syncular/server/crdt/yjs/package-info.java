/**
 * The built-in {@code yjs-doc} CRDT merger (§5.10) in plain Java, byte for byte the reference merger: the
 * stored and the pushed Yjs v1 update are applied to a fresh document and the merged value is
 * {@code Y.encodeStateAsUpdate} of it — the integrated state (deleted content garbage-collected, adjacent
 * items joined, overwritten map entries deleted, pending structs and deletes carried along). Written from
 * the Yjs 13.6 sources (https://github.com/yjs/yjs, MIT licence, Copyright (c) 2023 Kevin Jahns and RWTH
 * Aachen University, Chair of Computer Science 5; see NOTICE) in this package's own structure, without a
 * Yjs dependency, so the server core stays free of CRDT libraries (§5.10.2). The fixtures in
 * {@code src/test/resources/crdt/yjs} pin the bytes against Yjs 13.6.33.
 *
 * <ul>
 *   <li>lib0 primitives: {@code Lib0Reader} (strict UTF-8), {@code Lib0Writer}, {@code YjsAny} (self-describing
 *       values), {@code JsJson} (JSON as JavaScript parses and prints it);</li>
 *   <li>the update: {@code YjsUpdate} (decode, per client group), {@code Struct} (item, garbage-collected run,
 *       skip), {@code ItemContent} (the nine content kinds: split, join, countable), {@code SubdocOptions},
 *       {@code YjsId}, {@code DeleteSet}, {@code UpdateEncoder};</li>
 *   <li>the document: {@code YjsDoc} (transactions), {@code StructStore} (per-client runs, pending structs
 *       and deletes), {@code DocStruct}, {@code DocItem}, {@code DocGc}, {@code SharedType};
 *       {@code UpdateApplier} ({@code Y.applyUpdate}: dependencies, pending structs, retries),
 *       {@code ItemIntegrator} (YATA conflict resolution, map semantics), {@code DeleteSetApplier},
 *       {@code Transaction}, {@code TransactionCleanup} (garbage collection, struct merging),
 *       {@code FormattingCleanup} and {@code FormatValue} (redundant formatting after remote changes),
 *       {@code StateEncoder} ({@code Y.encodeStateAsUpdate});</li>
 *   <li>{@link dev.syncular.server.crdt.yjs.UpdateMerger}: {@code Y.mergeUpdates} without a document (with
 *       {@code JsArraySort}, V8's sort of short arrays, for its comparator), which
 *       the document uses as Yjs does, to keep pending structs and to write them into the state;</li>
 *   <li>the registry entry: {@link dev.syncular.server.crdt.yjs.YjsDocMerger}; bytes that cannot be read or
 *       applied: {@link dev.syncular.server.crdt.yjs.YjsFormatException} (the push answers
 *       {@code sync.crdt_merge_failed}, §5.10.6).</li>
 * </ul>
 *
 * <p>May depend on {@code sync} (the {@code CrdtTypeMerger} seam) only; never on storage, the Quarkus edge or
 * a CRDT library.
 */
package dev.syncular.server.crdt.yjs;
