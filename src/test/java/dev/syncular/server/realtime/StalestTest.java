package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.syncular.server.sync.SyncRequestContext;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The stalest clients of a pod from its sessions and pending fan-outs, without a socket: a partition's pending
 * fan-out holds every client of it from when its oldest commit was heard, an owed commit from its creation, the
 * larger lag names the reason, a socket's backpressure outranks a later wake-up, and the lists are cut at N.
 */
class StalestTest {
    static final long NOW = 1_000_000;

    static RealtimeSession session(String partition, String clientId) {
        return new RealtimeSession(
                "s-" + clientId,
                new SyncRequestContext("actor-" + clientId, partition, Map.of()),
                clientId,
                "epoch",
                null,
                null,
                () -> NOW,
                List.of(),
                0,
                false,
                1024,
                null,
                PresenceRate.OFF);
    }

    @Test
    void theLargerLagNamesTheReasonAndTheListsAreCutAtN() {
        SessionSet sessions = new SessionSet();
        PendingFanouts pending = new PendingFanouts();
        RealtimeSession woken = session("p1", "woken");
        RealtimeSession reading = session("p1", "reading");
        RealtimeSession stuck = session("p2", "stuck");
        RealtimeSession caughtUp = session("p3", "caught-up");
        for (RealtimeSession s : List.of(woken, reading, stuck, caughtUp)) {
            sessions.add(s);
        }
        woken.owe(NOW - 500, Staleness.PULL_INTERVAL);
        stuck.owe(NOW - 3000, Staleness.SOCKET_BACKPRESSURE);
        stuck.owe(NOW - 4000, Staleness.PULL_INTERVAL); // older, but the socket still holds it
        pending.heard("p1", NOW - 2000);
        pending.heard("p1", NOW - 100);

        Stalest all = Stalest.of(sessions, pending, 10, 1000, NOW);
        assertEquals(
                List.of(
                        new Stalest.StaleClient("p2", "stuck", "actor-stuck", 4000, Staleness.SOCKET_BACKPRESSURE),
                        new Stalest.StaleClient("p1", "reading", "actor-reading", 2000, Staleness.FANOUT_BACKLOG),
                        new Stalest.StaleClient("p1", "woken", "actor-woken", 2000, Staleness.FANOUT_BACKLOG)),
                all.clients(),
                "the caught-up client is not listed");
        assertEquals(
                List.of(
                        new Stalest.StalePartition("p2", 4000, Staleness.SOCKET_BACKPRESSURE, 1),
                        new Stalest.StalePartition("p1", 2000, Staleness.FANOUT_BACKLOG, 2)),
                all.partitions());
        assertEquals(
                Map.of(
                        Staleness.FANOUT_BACKLOG, 2,
                        Staleness.SOCKET_BACKPRESSURE, 1,
                        Staleness.PULL_INTERVAL, 0),
                all.overObjective());
        assertEquals(4, all.connections());

        // the oldest fan-out done: the next one holds p1 for 100 ms, less than the woken client's owed commit
        pending.done("p1");
        Stalest one = Stalest.of(sessions, pending, 1, 1000, NOW);
        assertEquals(List.of(all.clients().get(0)), one.clients(), "cut at N");
        assertEquals(1, one.partitions().size());
        Stalest later = Stalest.of(sessions, pending, 10, 1000, NOW);
        assertEquals(
                new Stalest.StaleClient("p1", "woken", "actor-woken", 500, Staleness.PULL_INTERVAL),
                later.clients().get(1));
        assertEquals(
                new Stalest.StaleClient("p1", "reading", "actor-reading", 100, Staleness.FANOUT_BACKLOG),
                later.clients().get(2));
        pending.done("p1");
        assertEquals(0, pending.oldestMs("p1"), "nothing pending");
    }
}
