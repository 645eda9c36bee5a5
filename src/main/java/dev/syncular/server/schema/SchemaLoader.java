package dev.syncular.server.schema;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

/**
 * The public entry point that turns a schema JSON document — the typegen schema IR or the short host
 * form (§2.4) — into a {@link CompiledSchema}, rejecting every invalid schema with a
 * {@link SchemaException} before anything is served (§2.4, §3.1, §5.10.1, §5.11, §6.11).
 *
 * <p>{@link SchemaIrParser} reads the document into a {@link SchemaIr}; {@link SchemaCompiler} compiles
 * that into the tables and applies the compile-time rejections. This class only reads the bytes and holds
 * the constants the two share.
 */
public final class SchemaLoader {
    /** The only schema-IR version this loader understands. */
    public static final int IR_VERSION = 1;

    /**
     * Longest table, column or index name, in UTF-8 bytes: PostgreSQL's identifier limit (NAMEDATALEN
     * 64 minus the terminator). Synced tables and columns become PostgreSQL identifiers, and PostgreSQL
     * silently truncates longer ones, which would let two declared names collide.
     */
    public static final int MAX_IDENTIFIER_BYTES = 63;

    /**
     * Name prefixes reserved for protocol/storage internals (compared case-insensitively): {@code _sync_}
     * (storage-internal columns such as {@code _sync_row_id}, the {@code _sync_version} query
     * pseudo-column, §2.4) and {@code _syncular} (client bookkeeping tables and columns such as
     * {@code _syncular_meta}, {@code _syncular_version}, §5.3, §7.4).
     */
    public static final List<String> RESERVED_PREFIXES = List.of("_sync_", "_syncular");

    /** The built-in CRDT merger names (§5.10.1: {@code yjs-doc} only). */
    public static final Set<String> BUILTIN_CRDT_TYPES = Set.of("yjs-doc");

    /** The {@code crdtType} the short host form implies for a {@code crdt} column that names none. */
    public static final String DEFAULT_CRDT_TYPE = "yjs-doc";

    private SchemaLoader() {}

    public static CompiledSchema parse(String json) {
        return parse(json, BUILTIN_CRDT_TYPES);
    }

    /** @param crdtTypes the merger names the host registers; a {@code crdtType} outside it is rejected */
    public static CompiledSchema parse(String json, Set<String> crdtTypes) {
        return compile(SchemaIrParser.readTree(json), crdtTypes);
    }

    public static CompiledSchema load(Path path) {
        return load(path, BUILTIN_CRDT_TYPES);
    }

    public static CompiledSchema load(Path path, Set<String> crdtTypes) {
        String text;
        try {
            text = Files.readString(path, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read schema file " + path, e);
        }
        return parse(text, crdtTypes);
    }

    public static CompiledSchema load(InputStream in) {
        return load(in, BUILTIN_CRDT_TYPES);
    }

    public static CompiledSchema load(InputStream in, Set<String> crdtTypes) {
        String text;
        try {
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read schema stream", e);
        }
        return parse(text, crdtTypes);
    }

    public static CompiledSchema compile(JsonNode root) {
        return compile(root, BUILTIN_CRDT_TYPES);
    }

    public static CompiledSchema compile(JsonNode root, Set<String> crdtTypes) {
        Set<String> registered = Set.copyOf(crdtTypes);
        return SchemaCompiler.compile(SchemaIrParser.parse(root), registered);
    }
}
