/**
 * The SSP2 wire format, pure: the envelope and frame registry (§1.2), the frame records and their
 * streaming encoder/decoder with the request and response grammars (§1.4–§1.7), the primitive encodings
 * (Conventions), the row codec, sparse push rows and column types (§2.4), SSG2 rows segments (§5.2), the
 * segment descriptor and inline frames (§5.4, §5.7), the canonical {@code blob_ref} shape (§5.9.1), the
 * debug JSON rendering (§11.1) and canonical JSON (§11.2), and {@code JsNumber}, ECMAScript
 * {@code Number::toString}, the number text of those two, of a {@code float} column's §3.1 scope value and of
 * the CRDT merger's JSON, and {@code Json}, the server's one plain Jackson mapper, shared by every package whose JSON
 * follows Jackson's defaults. A decode error is a {@link
 * dev.syncular.server.wire.WireException} carrying its static §10 code.
 *
 * <p>The bottom layer: it depends on no other package of this server (only the JDK and Jackson's tree
 * model and generator), knows nothing of Quarkus, and does no I/O — it turns bytes into records and back.
 */
package dev.syncular.server.wire;
