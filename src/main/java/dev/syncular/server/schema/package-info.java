/**
 * The application schema: reads the typegen schema IR or the short host form into a plain model
 * ({@code SchemaIrParser}, {@code SchemaIr}), compiles it into {@link dev.syncular.server.schema.CompiledSchema}
 * and {@link dev.syncular.server.schema.TableSchema} — columns in row-codec order, primary key, scope
 * patterns, indexes, references — and rejects every schema that must not be served with a
 * {@link dev.syncular.server.schema.SchemaException} before storage or serving starts (§2.4 schema IR and
 * primary-key eligibility, §3.1 scope patterns, §5.10.1 {@code crdtType}, §5.11 encrypted columns, §6.11
 * declared references). {@link dev.syncular.server.schema.SchemaWindow} validates the served schema window
 * of §9.
 *
 * <p>Depends only on {@code wire} (column types, row layouts), the JDK and Jackson's tree model; no Quarkus.
 * Its only I/O is reading a schema file in {@link dev.syncular.server.schema.SchemaLoader}.
 */
package dev.syncular.server.schema;
