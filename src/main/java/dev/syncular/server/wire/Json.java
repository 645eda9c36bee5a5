package dev.syncular.server.wire;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;

/**
 * The server's one plain Jackson mapper, Jackson's defaults unchanged, behind calls that cannot reconfigure it: an
 * {@link ObjectMapper} is thread-safe only while nobody changes its settings, so it is never handed out (only
 * {@link DebugJson}, in this package, writes through it). Every package parses and writes JSON here unless its
 * rules differ — strict parsers keep mappers of their own ({@code SchemaIrParser}, {@code TaggedValueCodec},
 * {@link dev.syncular.server.wire.realtime.ControlMessages}, {@link RecoveryDetails}).
 *
 * <p>Deliberately not the Quarkus-managed mapper: a host's {@code ObjectMapperCustomizer} and the Quarkus defaults
 * (modules, unknown-property and date settings) would otherwise reach the protocol's JSON (§10.1 error bodies, §11
 * debug JSON), and the pure packages (wire, schema, sync) stay free of Quarkus. Trees only, no reflection over
 * classes of the server's own: native-image friendly.
 */
public final class Json {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    private Json() {}

    /** The mapper itself, for {@link DebugJson}'s own generator; callers must not change its settings. */
    static ObjectMapper mapper() {
        return MAPPER;
    }

    /** The node factory of the trees this class builds and reads. */
    public static JsonNodeFactory nodes() {
        return MAPPER.getNodeFactory();
    }

    /** A new empty object node. */
    public static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    /** A new empty array node. */
    public static ArrayNode array() {
        return MAPPER.createArrayNode();
    }

    /** {@link ObjectMapper#readTree(String)}: one JSON document, a missing node for blank text. */
    public static JsonNode readTree(String json) throws JsonProcessingException {
        return MAPPER.readTree(json);
    }

    /** {@link ObjectMapper#readTree(byte[])}: one JSON document in UTF-8 (or another detected Unicode encoding). */
    public static JsonNode readTree(byte[] json) throws IOException {
        return MAPPER.readTree(json);
    }

    /** {@link ObjectMapper#readTree(InputStream)}: one JSON document; the stream is read to its end and closed. */
    public static JsonNode readTree(InputStream json) throws IOException {
        return MAPPER.readTree(json);
    }

    /** {@link ObjectMapper#readValue(String, TypeReference)}: JSON text bound to a JDK type (maps, lists, scalars). */
    public static <T> T readValue(String json, TypeReference<T> type) throws JsonProcessingException {
        return MAPPER.readValue(json, type);
    }

    /** Compact JSON text of a tree or JDK value. */
    public static String writeValueAsString(Object value) throws JsonProcessingException {
        return MAPPER.writeValueAsString(value);
    }

    /** Compact UTF-8 JSON of a tree or JDK value. */
    public static byte[] writeValueAsBytes(Object value) throws JsonProcessingException {
        return MAPPER.writeValueAsBytes(value);
    }

    /** A writer with Jackson's default pretty printer (an {@link ObjectWriter} is immutable). */
    public static ObjectWriter prettyWriter() {
        return MAPPER.writerWithDefaultPrettyPrinter();
    }

    /** A JDK value (maps, lists, strings, numbers, booleans, {@code byte[]}, null) as a tree. */
    public static <T extends JsonNode> T valueToTree(Object value) {
        return MAPPER.valueToTree(value);
    }

    /** {@link ObjectMapper#convertValue(Object, Class)}: a tree or value as a JDK type. */
    public static <T> T convertValue(Object value, Class<T> type) {
        return MAPPER.convertValue(value, type);
    }
}
