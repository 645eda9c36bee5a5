package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.StoredChange;
import dev.syncular.server.storage.StoredCommit;
import dev.syncular.server.sync.RealtimeDelta;
import dev.syncular.server.wire.Op;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * §8.2 deltas of one fan-out encoded once per distinct (log epoch, registrations), bounded in bytes across the pod's
 * fan-outs.
 */
class FanoutDeltasTest {
    private static final SchemaWindow WINDOW = SchemaWindow.single(SchemaLoader.parse("{\"version\": 1, \"tables\": [{"
            + "\"name\": \"todos\", \"primaryKey\": \"id\", \"scopes\": [\"list:{list_id}\"], \"columns\": ["
            + "{\"name\": \"id\", \"type\": \"string\", \"nullable\": false},"
            + "{\"name\": \"list_id\", \"type\": \"string\", \"nullable\": false},"
            + "{\"name\": \"title\", \"type\": \"string\", \"nullable\": false}]}]}"));

    private static List<RealtimeDelta.Registration> registered(String subscription, String list) {
        String json = "[{\"id\": \"" + subscription + "\", \"table\": \"todos\", \"scopes\": {\"list_id\": [\"" + list
                + "\"]}, \"schemaVersion\": 1}]";
        return RealtimeDelta.register(WINDOW, json, Map.of("list_id", List.of(list)));
    }

    private static StoredCommit commit(String list, String title) {
        return new StoredCommit(
                7,
                1_000L,
                "actor",
                "client",
                "cc-7",
                List.of(new StoredChange(
                        "todos", "t1", Op.UPSERT, 3L, Map.of("list_id", list), new Object[] {"t1", list, title})),
                StoredCommit.UNTRACED);
    }

    @Test
    void sessionsWithTheSameRegistrationsShareOneEncodingEqualToTheirOwn() {
        StoredCommit c = commit("l1", "hello");
        AtomicLong pod = new AtomicLong();
        FanoutDeltas deltas = new FanoutDeltas(c, pod);
        byte[] a = deltas.of("epoch", registered("s1", "l1"));
        byte[] b = deltas.of("epoch", registered("s1", "l1"));
        assertSame(a, b, "registrations equal by value: encoded once");
        assertArrayEquals(
                RealtimeDelta.delta("epoch", registered("s1", "l1"), c).encode(), a, "the delta a session gets alone");
        assertNotSame(a, deltas.of("other-epoch", registered("s1", "l1")), "another log epoch: another delta");
        assertNotSame(a, deltas.of("epoch", registered("s2", "l1")), "another subscription id: another delta");
        assertNull(deltas.of("epoch", registered("s1", "l2")), "a commit the registrations do not cover: none");
        assertNull(deltas.of("epoch", registered("s1", "l2")));
        deltas.release();
        assertEquals(0, pod.get(), "the fan-out's bytes are returned when it ends");
    }

    @Test
    void pastThePodsBoundADeltaIsEncodedForItsSessionAlone() {
        StoredCommit c = commit("l1", "x".repeat(1_000));
        AtomicLong pod = new AtomicLong(FanoutDeltas.POD_MAX_BYTES - 10);
        FanoutDeltas deltas = new FanoutDeltas(c, pod);
        byte[] a = deltas.of("epoch", registered("s1", "l1"));
        byte[] b = deltas.of("epoch", registered("s1", "l1"));
        assertArrayEquals(a, b);
        assertNotSame(a, b, "no room left: not kept");
        assertEquals(FanoutDeltas.POD_MAX_BYTES - 10, pod.get(), "nothing taken from the bound");
        deltas.release();
        assertEquals(FanoutDeltas.POD_MAX_BYTES - 10, pod.get());
    }
}
