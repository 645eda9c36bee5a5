package dev.syncular.server.sync;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.storage.ClientRecord;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.Json;
import dev.syncular.server.wire.SubscriptionFrame;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The client record a round leaves (§4.5): its registered subscriptions (§8.1), and when it is written —
 * {@link #mustSave} throttles cursor and update-time writes, which feed §4.6 retention.
 */
final class ClientRecords {

    /**
     * How stale a client record's {@code updated_at_ms} may get before an otherwise unchanged round rewrites
     * it. A round that changes nothing the record stores (actor, cursor, subscriptions, wire version) skips
     * the upsert unless the stored time is at least this old. Trade-off: the time feeds the retention active
     * window (§4.6, {@code jobs.RetentionPolicy}, 14 days by default), so an idle-but-polling client can look
     * up to this much older than it is and leave the window that much earlier — negligible against days —
     * while an unchanged poll costs no write (no WAL flush).
     */
    static final long CLIENT_RECORD_REFRESH_MS = 5 * 60_000L;

    /**
     * How long a stored cursor may trail the client's real one. A round whose only change is a cursor moving
     * forward (from a stored cursor {@code >= 0}) skips the upsert while the record is younger than this: an
     * active client's poll then costs no write and no WAL flush. Safe for §4.6 retention, which prunes only up
     * to the lowest stored cursor of the active clients — a trailing cursor retains more, never less. A cursor
     * moving back (a reset, a re-bootstrap), new subscriptions, a new actor or wire version are written at once.
     */
    static final long CLIENT_CURSOR_REFRESH_MS = 10_000L;

    private ClientRecords() {}

    /**
     * Whether {@code record} must be written over {@code stored} (see {@link #CLIENT_RECORD_REFRESH_MS} and
     * {@link #CLIENT_CURSOR_REFRESH_MS}).
     */
    static boolean mustSave(ClientRecord stored, ClientRecord record, long now) {
        if (stored == null
                || !stored.actorId().equals(record.actorId())
                || !Objects.equals(stored.wireVersion(), record.wireVersion())
                || !Objects.equals(stored.schemaVersion(), record.schemaVersion())
                || !sameJson(stored.subscriptionsJson(), record.subscriptionsJson())) {
            return true;
        }
        long age = now - stored.updatedAtMs();
        if (stored.cursor() == record.cursor()) {
            return age >= CLIENT_RECORD_REFRESH_MS;
        }
        boolean forward = stored.cursor() >= 0 && record.cursor() > stored.cursor();
        return !forward || age >= CLIENT_CURSOR_REFRESH_MS;
    }

    /** JSON equality regardless of formatting and key order (the stored document comes back as jsonb text). */
    static boolean sameJson(String a, String b) {
        if (a == null || b == null || a.equals(b)) {
            return Objects.equals(a, b);
        }
        try {
            return Json.readTree(a).equals(Json.readTree(b));
        } catch (JsonProcessingException e) {
            return false;
        }
    }

    /**
     * One registered subscription as {@link #registeredSubscriptions} stores it (§8.1), with the effective scopes of
     * the round that registered it: per requested key, the requested values the actor's allowed scopes granted
     * (§3.2 rule 4; an empty list is a key the allowed scopes granted nothing of, which revokes the subscription);
     * {@code effective} is {@code null} when unknown — the scope resolver answered nothing that round, or the
     * record was written before effective scopes were recorded.
     */
    record Registered(
            String id,
            String table,
            Map<String, List<String>> scopes,
            int schemaVersion,
            Map<String, List<String>> effective,
            boolean resolved) {}

    /**
     * §8.1: the registered subscriptions read back from a client record's document; an entry that does not
     * have the stored shape is left out (it registers nothing), a document that is not a list registers none.
     */
    static List<Registered> registered(String subscriptionsJson) {
        List<Registered> out = new ArrayList<>();
        if (subscriptionsJson == null) {
            return out;
        }
        JsonNode root;
        try {
            root = Json.readTree(subscriptionsJson);
        } catch (JsonProcessingException e) {
            return out;
        }
        if (root == null || !root.isArray()) {
            return out;
        }
        for (JsonNode n : root) {
            JsonNode id = n.get("id");
            JsonNode table = n.get("table");
            JsonNode scopes = n.get("scopes");
            JsonNode version = n.get("schemaVersion");
            if (id == null
                    || !id.isTextual()
                    || table == null
                    || !table.isTextual()
                    || scopes == null
                    || !scopes.isObject()
                    || version == null
                    || !version.canConvertToInt()) {
                continue;
            }
            Map<String, List<String>> requested = new LinkedHashMap<>();
            scopes.fields().forEachRemaining(e -> {
                List<String> values = new ArrayList<>();
                e.getValue().forEach(v -> values.add(v.asText()));
                requested.put(e.getKey(), values);
            });
            JsonNode eff = n.get("effectiveScopes");
            Map<String, List<String>> effective = null;
            if (eff != null && eff.isObject()) {
                effective = new LinkedHashMap<>();
                for (var it = eff.fields(); it.hasNext(); ) {
                    var e = it.next();
                    List<String> values = new ArrayList<>();
                    e.getValue().forEach(v -> values.add(v.asText()));
                    effective.put(e.getKey(), values);
                }
            }
            JsonNode resolved = n.get("resolved");
            out.add(new Registered(
                    id.textValue(),
                    table.textValue(),
                    requested,
                    version.intValue(),
                    effective,
                    resolved == null || resolved.asBoolean(true)));
        }
        return out;
    }

    /**
     * §8.1: the registered subscriptions of a pulling round, as the client record stores them, each with the
     * round's effective scopes per requested key (§3.2, see {@link Registered}) — what the admin row view
     * checks a row against. {@code allowed} is the round's allowed scopes (empty: the resolver answered none,
     * recorded as {@code "resolved": false}), {@code null} when the pull never resolved them.
     */
    static String registeredSubscriptions(
            RoundState round, List<SubscriptionFrame> subs, Optional<Map<String, List<String>>> allowed) {
        List<Map<String, Object>> registered = new ArrayList<>();
        for (SubscriptionFrame s : subs) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", s.id());
            m.put("table", s.table());
            m.put("scopes", s.scopes());
            m.put("schemaVersion", round.header.schemaVersion());
            if (allowed != null && allowed.isPresent()) {
                m.put("effectiveScopes", granted(s.scopes(), allowed.get()));
            } else if (allowed != null) {
                m.put("resolved", false);
            }
            registered.add(m);
        }
        return CanonicalJson.write(registered);
    }

    /** Per requested key the requested values {@code allowed} grants ({@code '*'} grants every value), sorted keys. */
    static Map<String, List<String>> granted(Map<String, List<String>> requested, Map<String, List<String>> allowed) {
        Map<String, List<String>> out = new TreeMap<>();
        for (Map.Entry<String, List<String>> e : requested.entrySet()) {
            List<String> allowedValues = allowed.getOrDefault(e.getKey(), List.of());
            boolean any = allowedValues.contains(EffectiveScopes.WILDCARD);
            List<String> values = new ArrayList<>();
            for (String v : e.getValue()) {
                if ((any || allowedValues.contains(v)) && !values.contains(v)) {
                    values.add(v);
                }
            }
            out.put(e.getKey(), values);
        }
        return out;
    }
}
