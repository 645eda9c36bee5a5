package dev.syncular.server.testsupport;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The Yjs 13.6.33 update fixtures in {@code src/test/resources/crdt/yjs/} (see the README there). */
public final class YjsFixtures {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HexFormat HEX = HexFormat.of();

    private YjsFixtures() {}

    public static JsonNode load(String name) {
        try (InputStream in = YjsFixtures.class.getResourceAsStream("/crdt/yjs/" + name + ".json")) {
            if (in == null) {
                throw new IllegalArgumentException("no Yjs fixture " + name);
            }
            return JSON.readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static byte[] bytes(JsonNode hex) {
        return HEX.parseHex(hex.asText());
    }

    public static String hex(byte[] b) {
        return HEX.formatHex(b);
    }

    /** The fixture's input updates by name, in file order. */
    public static Map<String, byte[]> inputs(JsonNode fixture) {
        Map<String, byte[]> m = new LinkedHashMap<>();
        for (JsonNode in : fixture.get("inputs")) {
            m.put(in.get("name").asText(), bytes(in.get("bytes")));
        }
        return m;
    }

    /** The recorded merge for exactly this input order. */
    public static JsonNode merge(JsonNode fixture, List<String> order) {
        for (JsonNode m : fixture.get("merges")) {
            List<String> o = new ArrayList<>();
            m.get("order").forEach(n -> o.add(n.asText()));
            if (o.equals(order)) {
                return m;
            }
        }
        throw new IllegalArgumentException("no recorded merge for " + order);
    }
}
