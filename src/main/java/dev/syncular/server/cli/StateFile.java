package dev.syncular.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.wire.Json;
import dev.syncular.server.wire.SubscriptionStatus;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The CLI's {@link ClientState} on disk, a small JSON document:
 * <pre>{"clientId":"cli-…","logEpoch":"…","commitCount":2,
 *  "subscriptions":[{"id":"s1","table":"tasks","scopes":{"project_id":["p1"]},
 *                    "cursor":12,"bootstrapState":null,"status":"active","reasonCode":null}]}</pre>
 * Written whole to a temporary file and moved into place, so a failed round leaves the previous state.
 */
public final class StateFile {

    private StateFile() {}

    /** The state in {@code file}, or a new client ({@code clientId}, else a random id) when there is none. */
    public static ClientState load(Path file, String clientId) {
        if (!Files.exists(file)) {
            return new ClientState(
                    clientId != null
                            ? clientId
                            : "cli-"
                                    + UUID.randomUUID()
                                            .toString()
                                            .replace("-", "")
                                            .substring(0, 16));
        }
        JsonNode root;
        try {
            root = Json.readTree(Files.readAllBytes(file));
        } catch (IOException e) {
            throw new IllegalArgumentException("state file " + file + " is not valid JSON: " + e.getMessage());
        }
        if (clientId != null && !clientId.equals(root.path("clientId").asText())) {
            throw new IllegalArgumentException("state file " + file + " belongs to client '"
                    + root.path("clientId").asText() + "', not '" + clientId + "'");
        }
        ClientState state = new ClientState(root.path("clientId").asText());
        state.logEpoch = text(root.get("logEpoch"));
        state.commitCount = root.path("commitCount").asLong();
        for (JsonNode s : root.path("subscriptions")) {
            Map<String, List<String>> scopes = new LinkedHashMap<>();
            s.path("scopes").properties().forEach(e -> {
                List<String> values = new ArrayList<>();
                e.getValue().forEach(v -> values.add(v.asText()));
                scopes.put(e.getKey(), values);
            });
            Subscription sub =
                    new Subscription(s.path("id").asText(), s.path("table").asText(), scopes);
            sub.cursor = s.path("cursor").asLong(-1);
            sub.bootstrapState = text(s.get("bootstrapState"));
            String status = text(s.get("status"));
            for (SubscriptionStatus st : SubscriptionStatus.values()) {
                if (st.wireName.equals(status)) {
                    sub.status = st;
                }
            }
            sub.reasonCode = text(s.get("reasonCode"));
            state.subscriptions.put(sub.id, sub);
        }
        return state;
    }

    public static void save(Path file, ClientState state) {
        try {
            Path dir = file.toAbsolutePath().getParent();
            Files.createDirectories(dir);
            Path tmp = Files.createTempFile(dir, ".syncular-state", ".tmp");
            Json.prettyWriter().writeValue(tmp.toFile(), render(state));
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write state file " + file, e);
        }
    }

    /** The document {@link #save} writes. */
    public static ObjectNode render(ClientState state) {
        ObjectNode root = Json.object();
        root.put("clientId", state.clientId);
        root.put("logEpoch", state.logEpoch);
        root.put("commitCount", state.commitCount);
        ArrayNode subs = root.putArray("subscriptions");
        for (Subscription s : state.subscriptions.values()) {
            ObjectNode o = subs.addObject();
            o.put("id", s.id);
            o.put("table", s.table);
            o.set("scopes", Json.valueToTree(s.scopes));
            o.put("cursor", s.cursor);
            o.put("bootstrapState", s.bootstrapState);
            o.put("status", s.status == null ? null : s.status.wireName);
            o.put("reasonCode", s.reasonCode);
        }
        return root;
    }

    private static String text(JsonNode n) {
        return n == null || n.isNull() ? null : n.asText();
    }
}
