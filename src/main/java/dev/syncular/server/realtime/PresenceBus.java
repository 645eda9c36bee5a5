package dev.syncular.server.realtime;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.storage.RealtimeSignals;
import dev.syncular.server.wire.realtime.ControlMessages;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jboss.logging.Logger;

/**
 * Presence between pods (§8.6 with several pods): sent on the storage's presence channel
 * ({@link RealtimeSignals#publishPresence}, PostgreSQL {@code NOTIFY}), heard by every pod's one listening connection
 * ({@link CommitNotifications}). A message is a small JSON
 * object: {@code set} / {@code del} of a peer's document on a scope key, or {@code hello} (a pod started or
 * re-LISTENed: re-announce), {@code alive} (heartbeat) and {@code bye} (drain) about a pod.
 *
 * <p>A NOTIFY payload holds under 8000 bytes and a presence document up to
 * {@code syncular.realtime.max-presence-bytes}, so a message travels base64-encoded in chunks
 * {@code <pod>|<n>|<i>|<count>|<chunk>}, all chunks sent by one statement (one transaction: delivered
 * together and in order). Sends of this pod are chained, so other pods see its changes in the order they
 * happened here. The chain is bounded ({@link #MAX_QUEUED} messages, {@link #MAX_QUEUED_CHARS} characters):
 * past it a message is dropped (logged once per episode, counted), and once the chain has drained the pod
 * re-announces itself — {@code bye}, then every local document — so the other pods converge again.
 */
final class PresenceBus implements PresenceRegistry.Broadcast {
    private static final Logger LOG = Logger.getLogger(PresenceBus.class);
    private static final int CHUNK_CHARS = 6000;
    static final int MAX_QUEUED = 4096;
    static final long MAX_QUEUED_CHARS = 16L << 20;

    /** What the hub does with a message of another pod. */
    interface Receiver {
        void received(String pod, ObjectNode message);
    }

    private final RealtimeSignals signals;
    private final String channel;
    private final String podId;
    private long sent;
    private CompletableFuture<Void> tail = CompletableFuture.completedFuture(null);
    private int queued;
    private long queuedChars;
    /** Messages were dropped since the chain last drained: re-announce once it has. */
    private boolean overflowed;

    private final Runnable dropped;
    private final Runnable reannounce;
    /** Chunks of a message still arriving, per sending pod (one transaction's chunks arrive together). */
    private final Map<String, List<String>> partial = new HashMap<>();

    /**
     * {@code dropped} runs for each message dropped at the bound; {@code reannounce} once the chain drained after
     * drops (it sends this pod's {@code bye} and documents again).
     */
    PresenceBus(RealtimeSignals signals, String podId, Runnable dropped, Runnable reannounce) {
        this.dropped = dropped;
        this.reannounce = reannounce;
        this.signals = signals;
        this.channel = signals.presenceChannel();
        this.podId = podId;
    }

    String channel() {
        return channel;
    }

    @Override
    public void set(String partition, String scopeKey, PresenceRegistry.Peer peer, ObjectNode doc) {
        ObjectNode m = peerMessage("set", partition, scopeKey, peer);
        m.set("d", doc);
        send(m);
    }

    @Override
    public void delete(String partition, String scopeKey, PresenceRegistry.Peer peer) {
        send(peerMessage("del", partition, scopeKey, peer));
    }

    /** A message about this pod: {@code hello}, {@code alive} or {@code bye}. */
    void pod(String type) {
        send(JsonNodeFactory.instance.objectNode().put("t", type));
    }

    /** Resolves once every message sent so far has been handed to PostgreSQL (for the drain's {@code bye}). */
    synchronized CompletableFuture<Void> flushed() {
        return tail;
    }

    private static ObjectNode peerMessage(String type, String partition, String scopeKey, PresenceRegistry.Peer peer) {
        return JsonNodeFactory.instance
                .objectNode()
                .put("t", type)
                .put("p", partition)
                .put("k", scopeKey)
                .put("a", peer.actorId())
                .put("c", peer.clientId());
    }

    private synchronized void send(ObjectNode message) {
        String encoded = Base64.getEncoder().encodeToString(message.toString().getBytes(StandardCharsets.UTF_8));
        int count = (encoded.length() + CHUNK_CHARS - 1) / CHUNK_CHARS;
        long n = ++sent;
        String[] chunks = new String[Math.max(count, 1)];
        for (int i = 0; i < chunks.length; i++) {
            int from = i * CHUNK_CHARS;
            chunks[i] = podId + "|" + n + "|" + i + "|" + chunks.length + "|"
                    + encoded.substring(from, Math.min(encoded.length(), from + CHUNK_CHARS));
        }
        long chars = encoded.length();
        if (queued >= MAX_QUEUED || queuedChars + chars > MAX_QUEUED_CHARS) {
            if (!overflowed) {
                LOG.warnf(
                        "Presence NOTIFY queue full (%d messages); dropping until it drains, then re-announcing",
                        queued);
            }
            overflowed = true;
            dropped.run();
            return;
        }
        queued++;
        queuedChars += chars;
        List<String> all = List.of(chunks);
        tail = tail.thenCompose(v -> signals.publishPresence(all)
                        .subscribeAsCompletionStage()
                        .<Void>thenApply(rows -> null)
                        .exceptionally(e -> {
                            LOG.warn(
                                    "Presence NOTIFY failed; other pods miss one presence change until the next hello",
                                    e);
                            return null;
                        }))
                .whenComplete((v, e) -> sent(chars));
    }

    private void sent(long chars) {
        boolean recover;
        synchronized (this) {
            queued--;
            queuedChars -= chars;
            recover = queued == 0 && overflowed;
            if (recover) {
                overflowed = false;
            }
        }
        if (recover) {
            reannounce.run();
        }
    }

    /** A notification on the presence channel: a whole message of another pod goes to {@code receiver}. */
    void received(String payload, Receiver receiver) {
        String[] f = payload.split("\\|", 5);
        if (f.length != 5 || f[0].equals(podId)) {
            return; // malformed, or this pod's own message
        }
        String pod = f[0];
        int index;
        int count;
        try {
            index = Integer.parseInt(f[2]);
            count = Integer.parseInt(f[3]);
        } catch (NumberFormatException e) {
            return;
        }
        String whole;
        synchronized (partial) {
            List<String> parts = index == 0 ? new ArrayList<>() : partial.get(pod);
            if (parts == null || parts.size() != index) {
                partial.remove(pod);
                return; // a chunk out of order (a lost LISTEN connection): the hello that follows repairs it
            }
            parts.add(f[4]);
            if (parts.size() < count) {
                partial.put(pod, parts);
                return;
            }
            partial.remove(pod);
            whole = String.join("", parts);
        }
        JsonNode node;
        try {
            node = ControlMessages.readTree(new String(Base64.getDecoder().decode(whole), StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            return;
        }
        if (node instanceof ObjectNode m) {
            receiver.received(pod, m);
        }
    }
}
