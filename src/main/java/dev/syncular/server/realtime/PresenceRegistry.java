package dev.syncular.server.realtime;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.wire.realtime.ControlMessage;
import dev.syncular.server.wire.realtime.ControlMessages;
import dev.syncular.server.wire.realtime.PresenceErrorCode;
import dev.syncular.server.wire.realtime.PresenceKind;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.Predicate;

/**
 * The §8.6.4 presence registry of the pod: per {@code (partition, scopeKey)}, the present peers and their
 * documents. Ephemeral: held in memory only, never in storage (§8.6.1).
 *
 * <p>Several pods: a peer's document lives in the registry of every pod, so a scope-mate on any pod gets its
 * fanout and its snapshot. Changes made by this pod's connections are broadcast on the {@link PresenceBus};
 * changes received from other pods are applied and fanned out to the local scope-mates. A pod that starts
 * (or re-LISTENs) says {@code hello} and the others re-announce their documents; a pod leaving says
 * {@code bye}; a pod silent for three heartbeat intervals is presumed gone. Either way its peers leave.
 *
 * <p>Authorization (§8.6.3): a connection publishes to, and hears of, exactly the scope keys it is registered
 * on ({@link RealtimeSession#holds}). All changes happen under the registry's monitor, so the events one
 * connection receives are in the order the registry changed.
 */
final class PresenceRegistry {
    /** The peer identity of §8.6.1. */
    record Peer(String actorId, String clientId) {}

    /** A present peer's document; {@code owner} is the local connection, {@code null} for another pod's peer. */
    record Entry(ObjectNode doc, RealtimeSession owner, String pod) {}

    /** A change of this pod's presence to broadcast to the other pods. */
    interface Broadcast {
        void set(String partition, String scopeKey, Peer peer, ObjectNode doc);

        void delete(String partition, String scopeKey, Peer peer);
    }

    private final Map<String, Map<String, Map<Peer, Entry>>> byPartition = new HashMap<>();
    private final Map<String, Long> podLastHeard = new HashMap<>();
    /**
     * The keys each local connection has been granted presence on: set together with its join-burst snapshot
     * under this monitor, so a document published concurrently with a registration reaches the connection
     * exactly once — in the snapshot or as a live event, never both (§8.6.4).
     */
    private final Map<RealtimeSession, Set<String>> granted = new HashMap<>();

    private final Function<String, Iterable<RealtimeSession>> sessions;
    private final Broadcast broadcast;
    private final LongSupplier clock;
    private final String podId;
    private volatile long maxDocBytes;
    private int localMembers;

    PresenceRegistry(
            String podId,
            Function<String, Iterable<RealtimeSession>> sessions,
            Broadcast broadcast,
            LongSupplier clock,
            long maxDocBytes) {
        this.podId = podId;
        this.sessions = sessions;
        this.broadcast = broadcast;
        this.clock = clock;
        this.maxDocBytes = maxDocBytes;
    }

    /** Documents published by this pod's connections (the presence-members gauge). */
    synchronized int localMembers() {
        return localMembers;
    }

    /** §8.6.2/§8.6.4: a publish or (with a {@code null} doc) a leave from local connection {@code s}. */
    synchronized void publish(RealtimeSession s, ControlMessage.PresencePublish m) {
        String key = m.scopeKey();
        if (!s.holds(key)) {
            s.sendText(ControlMessages.render(
                    new ControlMessage.PresenceError(key, PresenceErrorCode.FORBIDDEN, clock.getAsLong())));
            return;
        }
        Peer peer = new Peer(s.ctx.actorId(), s.clientId);
        if (m.isLeave()) {
            Entry e = entries(s.ctx.partition(), key).get(peer);
            if (e != null && e.owner() == s) {
                remove(s.ctx.partition(), key, peer, null);
                broadcast.delete(s.ctx.partition(), key, peer);
            }
            return;
        }
        ObjectNode doc = m.doc();
        if (doc.toString().getBytes(StandardCharsets.UTF_8).length > maxDocBytes) {
            // fail loud, to the publisher only; its stored document stays as it was
            s.sendText(ControlMessages.render(
                    new ControlMessage.PresenceError(key, PresenceErrorCode.TOO_LARGE, clock.getAsLong())));
            return;
        }
        put(s.ctx.partition(), key, peer, new Entry(doc, s, podId), s);
        broadcast.set(s.ctx.partition(), key, peer, doc);
    }

    /**
     * §8.6.3: the connection's registered keys changed (connect, socket round, revocation). Keys it lost drop
     * its own documents there (a leave to the remaining mates); keys it gained deliver the join-burst snapshot.
     */
    synchronized void registrationChanged(RealtimeSession s, Set<String> before, Set<String> after) {
        if (s.closed) {
            return; // closed before its registration reached the registry: disconnected() ran or will find nothing
        }
        Set<String> had = granted.getOrDefault(s, Set.of());
        Set<String> lost = new HashSet<>(before);
        lost.addAll(had);
        for (String key : lost) {
            if (!after.contains(key)) {
                dropOwn(s, key);
            }
        }
        granted.put(s, Set.copyOf(after));
        Map<String, Map<Peer, Entry>> keys = byPartition.get(s.ctx.partition());
        if (keys == null) {
            return;
        }
        long now = clock.getAsLong();
        for (String key : after) {
            Map<Peer, Entry> present = had.contains(key) ? null : keys.get(key);
            if (present == null) {
                continue;
            }
            for (Map.Entry<Peer, Entry> e : present.entrySet()) {
                if (e.getValue().owner() != s) {
                    s.sendText(fanout(
                            key, PresenceKind.JOIN, e.getKey(), e.getValue().doc(), now));
                }
            }
        }
    }

    /** §8.6.1: a closed connection (clean or not) leaves every key it was present on. */
    synchronized void disconnected(RealtimeSession s) {
        granted.remove(s);
        Map<String, Map<Peer, Entry>> keys = byPartition.get(s.ctx.partition());
        if (keys == null) {
            return;
        }
        for (String key : new ArrayList<>(keys.keySet())) {
            dropOwn(s, key);
        }
    }

    private void dropOwn(RealtimeSession s, String key) {
        Peer peer = new Peer(s.ctx.actorId(), s.clientId);
        Entry e = entries(s.ctx.partition(), key).get(peer);
        if (e != null && e.owner() == s) {
            remove(s.ctx.partition(), key, peer, s);
            broadcast.delete(s.ctx.partition(), key, peer);
        }
    }

    // ------------------------------------------------------------------ other pods

    /** Another pod's peer published (or re-announced) a document. */
    synchronized void remoteSet(String pod, String partition, String key, Peer peer, ObjectNode doc) {
        heard(pod);
        Entry known = entries(partition, key).get(peer);
        if (known != null
                && known.owner() == null
                && known.pod().equals(pod)
                && known.doc().equals(doc)) {
            return; // a re-announcement (after some pod's hello) of what is known already
        }
        put(partition, key, peer, new Entry(doc, null, pod), null);
    }

    /** Another pod's peer left {@code key}; a newer document of the same peer elsewhere stays. */
    synchronized void remoteDelete(String pod, String partition, String key, Peer peer) {
        heard(pod);
        Entry e = entries(partition, key).get(peer);
        if (e != null && e.owner() == null && e.pod().equals(pod)) {
            remove(partition, key, peer, null);
        }
    }

    synchronized void heard(String pod) {
        podLastHeard.put(pod, SilenceWatch.MONOTONIC_MS.getAsLong());
    }

    /** A pod said {@code bye}, or was silent too long: its peers leave everywhere. */
    synchronized void podGone(String pod) {
        podLastHeard.remove(pod);
        dropRemote(e -> e.pod().equals(pod));
    }

    /** Pods not heard from for three heartbeat intervals ({@link SilenceWatch#silent}) are presumed gone. */
    synchronized void expireSilentPods(SilenceWatch silence, SilenceWatch.Tick tick) {
        for (Iterator<Map.Entry<String, Long>> it = podLastHeard.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<String, Long> p = it.next();
            if (silence.silent(tick, p.getValue())) {
                it.remove();
                String pod = p.getKey();
                dropRemote(e -> e.pod().equals(pod));
            }
        }
    }

    /** This pod's LISTEN connection was lost: what it knew of other pods may be stale; forget it all. */
    synchronized void forgetOtherPods() {
        podLastHeard.clear();
        dropRemote(e -> true);
    }

    /** This pod's documents, to re-announce to a pod that said {@code hello}. */
    synchronized void announceLocal() {
        byPartition.forEach((partition, keys) -> keys.forEach((key, peers) -> peers.forEach((peer, e) -> {
            if (e.owner() != null) {
                broadcast.set(partition, key, peer, e.doc());
            }
        })));
    }

    void maxDocBytes(long bytes) {
        this.maxDocBytes = bytes;
    }

    private void dropRemote(Predicate<Entry> which) {
        for (String partition : new ArrayList<>(byPartition.keySet())) {
            Map<String, Map<Peer, Entry>> keys = byPartition.get(partition);
            for (String key : new ArrayList<>(keys.keySet())) {
                List<Peer> gone = new ArrayList<>();
                keys.get(key).forEach((peer, e) -> {
                    if (e.owner() == null && which.test(e)) {
                        gone.add(peer);
                    }
                });
                gone.forEach(peer -> remove(partition, key, peer, null));
            }
        }
    }

    // ------------------------------------------------------------------ state and fanout

    private Map<Peer, Entry> entries(String partition, String key) {
        Map<String, Map<Peer, Entry>> keys = byPartition.get(partition);
        Map<Peer, Entry> peers = keys == null ? null : keys.get(key);
        return peers == null ? Map.of() : peers;
    }

    private void put(String partition, String key, Peer peer, Entry entry, RealtimeSession publisher) {
        Map<Peer, Entry> peers = byPartition
                .computeIfAbsent(partition, p -> new HashMap<>())
                .computeIfAbsent(key, k -> new LinkedHashMap<>());
        Entry before = peers.put(peer, entry);
        localMembers += (entry.owner() != null ? 1 : 0) - (before != null && before.owner() != null ? 1 : 0);
        fanOut(partition, key, before == null ? PresenceKind.JOIN : PresenceKind.UPDATE, peer, entry.doc(), publisher);
    }

    private void remove(String partition, String key, Peer peer, RealtimeSession leaving) {
        Map<String, Map<Peer, Entry>> keys = byPartition.get(partition);
        Map<Peer, Entry> peers = keys == null ? null : keys.get(key);
        Entry before = peers == null ? null : peers.remove(peer);
        if (before == null) {
            return;
        }
        localMembers -= before.owner() != null ? 1 : 0;
        if (peers.isEmpty()) {
            keys.remove(key);
            if (keys.isEmpty()) {
                byPartition.remove(partition);
            }
        }
        fanOut(partition, key, PresenceKind.LEAVE, peer, null, leaving != null ? leaving : before.owner());
    }

    /**
     * To every connection of the partition registered on {@code key} and granted it here (its snapshot is out),
     * except {@code except} (the publisher).
     */
    private void fanOut(
            String partition, String key, PresenceKind kind, Peer peer, ObjectNode doc, RealtimeSession except) {
        String event = null;
        for (RealtimeSession s : sessions.apply(partition)) {
            if (s != except && s.holds(key) && granted.getOrDefault(s, Set.of()).contains(key)) {
                if (event == null) {
                    event = fanout(key, kind, peer, doc, clock.getAsLong());
                }
                s.sendText(event);
            }
        }
    }

    private static String fanout(String key, PresenceKind kind, Peer peer, ObjectNode doc, long now) {
        return ControlMessages.render(new ControlMessage.PresenceFanout(
                key, kind, peer.actorId(), peer.clientId(), kind == PresenceKind.LEAVE ? null : doc, now));
    }
}
