package dev.syncular.server.operations;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The REMOTE.md §4 recursively tagged value encoding over UTF-8 JSON, exactly: every value is an object with
 * the tag {@code t} and (except {@code null}) the payload {@code v}, nothing else. Integers are canonical decimal
 * text in the signed 64-bit range ({@code "-0"}, {@code "01"}, {@code "+1"} are refused); bytes are canonical
 * padded standard base64 (the encoding of the decoded bytes must give back the same text); objects are
 * {@code [key, value]} pairs with unique keys; numbers are finite. Anything else, invalid UTF-8, duplicate JSON
 * keys and nesting beyond {@link #MAX_DEPTH} tagged levels are {@code operation.invalid_request}.
 */
public final class TaggedValueCodec {
    /** Tagged containers (arrays and objects) nested deeper than this are refused. */
    public static final int MAX_DEPTH = 32;

    private static final int MAX_JSON_DEPTH = 4 * MAX_DEPTH + 8;
    private static final Pattern CANONICAL_INTEGER = Pattern.compile("-?(?:0|[1-9][0-9]*)");
    private static final BigInteger MIN = BigInteger.valueOf(Long.MIN_VALUE);
    private static final BigInteger MAX = BigInteger.valueOf(Long.MAX_VALUE);
    private static final ObjectMapper JSON;

    static {
        JsonFactory factory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(MAX_JSON_DEPTH)
                        .build())
                .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
                .build();
        JSON = new ObjectMapper(factory);
    }

    private TaggedValueCodec() {}

    /** Decodes one encoded value from the message bytes. */
    public static OperationValue decode(byte[] utf8) {
        String text;
        try {
            text = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(utf8))
                    .toString();
        } catch (CharacterCodingException e) {
            throw OperationException.invalid("operation message is not valid UTF-8");
        }
        JsonNode root;
        try (JsonParser p = JSON.createParser(text)) {
            root = JSON.readTree(p);
            if (root == null || p.nextToken() != null) {
                throw OperationException.invalid("operation message must be exactly one JSON value");
            }
        } catch (IOException e) {
            throw OperationException.invalid("operation message is not valid JSON");
        }
        return decode(root, 0);
    }

    static OperationValue decode(JsonNode node, int depth) {
        if (!(node instanceof ObjectNode o) || !o.has("t") || !o.get("t").isTextual()) {
            throw OperationException.invalid("a tagged value must be an object with a string tag t");
        }
        String tag = o.get("t").textValue();
        if (tag.equals("null")) {
            if (o.size() != 1) {
                throw OperationException.invalid("a null value carries no v");
            }
            return OperationValue.Null.INSTANCE;
        }
        if (o.size() != 2 || !o.has("v")) {
            throw OperationException.invalid("a tagged value has exactly the members t and v");
        }
        JsonNode v = o.get("v");
        switch (tag) {
            case "boolean" -> {
                if (!v.isBoolean()) {
                    throw OperationException.invalid("a boolean value must be true or false");
                }
                return new OperationValue.Bool(v.booleanValue());
            }
            case "number" -> {
                if (!v.isNumber() || !Double.isFinite(v.doubleValue())) {
                    throw OperationException.invalid("a number value must be a finite JSON number");
                }
                return new OperationValue.Number(v.doubleValue());
            }
            case "string" -> {
                if (!v.isTextual()) {
                    throw OperationException.invalid("a string value must be a JSON string");
                }
                return new OperationValue.Text(v.textValue());
            }
            case "integer" -> {
                if (!v.isTextual()
                        || v.textValue().length() > 20
                        || !CANONICAL_INTEGER.matcher(v.textValue()).matches()
                        || v.textValue().equals("-0")) {
                    throw OperationException.invalid("an integer value must be canonical decimal text");
                }
                BigInteger big = new BigInteger(v.textValue());
                if (big.compareTo(MIN) < 0 || big.compareTo(MAX) > 0) {
                    throw OperationException.invalid("an integer value must be in the signed 64-bit range");
                }
                return new OperationValue.Integer(big.longValue());
            }
            case "bytes" -> {
                if (!v.isTextual()) {
                    throw OperationException.invalid("a bytes value must be base64 text");
                }
                byte[] bytes;
                try {
                    bytes = Base64.getDecoder().decode(v.textValue());
                } catch (IllegalArgumentException e) {
                    throw OperationException.invalid("a bytes value must be canonical padded base64");
                }
                if (!Base64.getEncoder().encodeToString(bytes).equals(v.textValue())) {
                    throw OperationException.invalid("a bytes value must be canonical padded base64");
                }
                return new OperationValue.Bytes(bytes);
            }
            case "array" -> {
                if (!(v instanceof ArrayNode a)) {
                    throw OperationException.invalid("an array value must be a JSON array");
                }
                requireDepth(depth);
                List<OperationValue> items = new ArrayList<>(a.size());
                for (JsonNode item : a) {
                    items.add(decode(item, depth + 1));
                }
                return new OperationValue.Array(items);
            }
            case "object" -> {
                if (!(v instanceof ArrayNode a)) {
                    throw OperationException.invalid("an object value must be a JSON array of pairs");
                }
                requireDepth(depth);
                Map<String, OperationValue> fields = new LinkedHashMap<>();
                for (JsonNode pair : a) {
                    if (!(pair instanceof ArrayNode kv)
                            || kv.size() != 2
                            || !kv.get(0).isTextual()) {
                        throw OperationException.invalid("an object pair must be [string key, value]");
                    }
                    String key = kv.get(0).textValue();
                    if (fields.containsKey(key)) {
                        throw OperationException.invalid("an object value repeats a key");
                    }
                    fields.put(key, decode(kv.get(1), depth + 1));
                }
                return new OperationValue.Obj(fields);
            }
            default -> throw OperationException.invalid("unknown value tag");
        }
    }

    private static void requireDepth(int depth) {
        if (depth >= MAX_DEPTH) {
            throw OperationException.invalid("tagged values nest too deeply");
        }
    }

    /** Encodes one value as UTF-8 JSON bytes. */
    public static byte[] encode(OperationValue value) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256);
        try (JsonGenerator g = JSON.getFactory().createGenerator(out)) {
            write(g, value);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }

    private static void write(JsonGenerator g, OperationValue value) throws IOException {
        g.writeStartObject();
        if (value instanceof OperationValue.Null) {
            g.writeStringField("t", "null");
        } else if (value instanceof OperationValue.Bool b) {
            g.writeStringField("t", "boolean");
            g.writeBooleanField("v", b.value());
        } else if (value instanceof OperationValue.Number n) {
            g.writeStringField("t", "number");
            double d = n.value();
            if (d == Math.rint(d) && Math.abs(d) < 9.007199254740992E15) {
                g.writeNumberField("v", (long) d); // integral numbers as JSON integers (42, not 42.0)
            } else {
                g.writeNumberField("v", d);
            }
        } else if (value instanceof OperationValue.Text t) {
            g.writeStringField("t", "string");
            g.writeStringField("v", t.value());
        } else if (value instanceof OperationValue.Integer i) {
            g.writeStringField("t", "integer");
            g.writeStringField("v", Long.toString(i.value()));
        } else if (value instanceof OperationValue.Bytes b) {
            g.writeStringField("t", "bytes");
            g.writeStringField("v", Base64.getEncoder().encodeToString(b.value()));
        } else if (value instanceof OperationValue.Array a) {
            g.writeStringField("t", "array");
            g.writeArrayFieldStart("v");
            for (OperationValue item : a.items()) {
                write(g, item);
            }
            g.writeEndArray();
        } else if (value instanceof OperationValue.Obj o) {
            g.writeStringField("t", "object");
            g.writeArrayFieldStart("v");
            for (Map.Entry<String, OperationValue> e : o.fields().entrySet()) {
                g.writeStartArray();
                g.writeString(e.getKey());
                write(g, e.getValue());
                g.writeEndArray();
            }
            g.writeEndArray();
        }
        g.writeEndObject();
    }
}
