package dev.syncular.server.wire.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.wire.WireException;
import dev.syncular.server.wire.realtime.ControlMessage.Ack;
import dev.syncular.server.wire.realtime.ControlMessage.Heartbeat;
import dev.syncular.server.wire.realtime.ControlMessage.Hello;
import dev.syncular.server.wire.realtime.ControlMessage.PresenceError;
import dev.syncular.server.wire.realtime.ControlMessage.PresenceFanout;
import dev.syncular.server.wire.realtime.ControlMessage.PresencePublish;
import dev.syncular.server.wire.realtime.ControlMessage.Unknown;
import dev.syncular.server.wire.realtime.ControlMessage.Wake;
import org.junit.jupiter.api.Test;

class ControlMessagesTest {

    private static final String HELLO_DATA_TAIL =
            "\"sessionId\":\"s\",\"actorId\":\"a\",\"clientId\":\"c\",\"latestCursor\":9,"
                    + "\"requiresSync\":false,\"timestamp\":123";

    private static String hello(String cursorLiteral) {
        return "{\"event\":\"hello\",\"data\":{\"protocolVersion\":1,\"cursor\":" + cursorLiteral + ","
                + HELLO_DATA_TAIL + "}}";
    }

    private static void assertInvalidServer(String json) {
        WireException e = assertThrows(WireException.class, () -> ControlMessages.parseServerMessage(json), json);
        assertEquals(WireException.INVALID_REQUEST, e.code());
    }

    private static void assertInvalidClient(String json) {
        WireException e = assertThrows(WireException.class, () -> ControlMessages.parseClientMessage(json), json);
        assertEquals(WireException.INVALID_REQUEST, e.code());
    }

    @Test
    void parsesHello() {
        ControlMessage m = ControlMessages.parseServerMessage(hello("5"));
        assertEquals(new Hello(1, "s", "a", "c", 5, 9, false, 123), m);
        assertEquals(
                "{\"event\":\"hello\",\"data\":{\"protocolVersion\":1,\"sessionId\":\"s\",\"actorId\":\"a\","
                        + "\"clientId\":\"c\",\"cursor\":5,\"latestCursor\":9,\"requiresSync\":false,\"timestamp\":123}}",
                ControlMessages.render(m));
    }

    @Test
    void helloRequiresEveryField() {
        assertInvalidServer("{\"event\":\"hello\",\"data\":{\"protocolVersion\":1,\"cursor\":5,"
                + "\"sessionId\":\"s\",\"actorId\":\"a\",\"latestCursor\":9,\"requiresSync\":false,\"timestamp\":1}}");
        assertInvalidServer("{\"event\":\"hello\",\"data\":{\"protocolVersion\":1,\"cursor\":5,"
                + "\"sessionId\":\"s\",\"actorId\":\"a\",\"clientId\":\"c\",\"latestCursor\":9,"
                + "\"requiresSync\":\"yes\",\"timestamp\":1}}");
    }

    @Test
    void extraFieldsAreIgnored() {
        String json = "{\"event\":\"heartbeat\",\"extra\":1,\"data\":{\"timestamp\":7,\"future\":{\"x\":[1]}}}";
        assertEquals(new Heartbeat(7), ControlMessages.parseServerMessage(json));
    }

    @Test
    void unknownEventTolerated() {
        ControlMessage m =
                ControlMessages.parseServerMessage("{\"event\":\"typing-indicator\",\"data\":{\"anything\":true}}");
        assertEquals(new Unknown("typing-indicator"), m);
        // Unknown events are tolerated whatever their data looks like, even with no data.
        assertEquals(
                new Unknown("cursor-moved"),
                ControlMessages.parseServerMessage("{\"event\":\"cursor-moved\",\"data\":3.5}"));
        assertEquals(new Unknown("x"), ControlMessages.parseServerMessage("{\"event\":\"x\"}"));
        // Client direction: unknown type and unknown event are tolerated too.
        assertEquals(new Unknown("ping"), ControlMessages.parseClientMessage("{\"type\":\"ping\"}"));
        assertEquals(new Unknown("typing"), ControlMessages.parseClientMessage("{\"event\":\"typing\",\"data\":null}"));
        // ...and the server events are unknown in the client direction.
        assertEquals(new Unknown("sync"), ControlMessages.parseClientMessage("{\"event\":\"sync\",\"data\":{}}"));
        WireException e =
                assertThrows(WireException.class, () -> ControlMessages.render(new Unknown("typing-indicator")));
        assertEquals(WireException.INVALID_REQUEST, e.code());
    }

    @Test
    void wrongShapeKnownEventRejected() {
        assertInvalidServer("{\"event\":\"heartbeat\",\"data\":{\"timestamp\":\"soon\"}}");
        assertInvalidServer("{\"event\":\"heartbeat\"}");
        assertInvalidServer("{\"event\":\"heartbeat\",\"data\":null}");
        assertInvalidServer("{\"event\":\"heartbeat\",\"data\":[1]}");
        assertInvalidServer("{\"event\":\"hello\",\"data\":{}}");
        assertInvalidServer("{\"event\":\"sync\",\"data\":\"now\"}");
        assertInvalidServer("{\"event\":\"presence\"}");
        assertInvalidServer("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"p:1\"}}");
        assertInvalidClient("{\"event\":\"presence\",\"data\":{\"doc\":null}}");
        assertInvalidClient("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"\",\"doc\":null}}");
        assertInvalidClient("{\"event\":\"presence\",\"data\":{\"scopeKey\":7,\"doc\":null}}");
        assertInvalidClient("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"p:1\"}}");
        assertInvalidClient("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"p:1\",\"doc\":[1]}}");
        assertInvalidClient("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"p:1\",\"doc\":\"online\"}}");
    }

    @Test
    void malformedEnvelopesRejected() {
        for (String bad : new String[] {
            "not json",
            "",
            "[]",
            "null",
            "42",
            "{\"event\":7}",
            "{\"data\":{}}",
            "{\"event\":\"heartbeat\",\"data\":{\"timestamp\":1}} trailing"
        }) {
            assertInvalidServer(bad);
        }
        for (String bad :
                new String[] {"not json", "{}", "{\"type\":1}", "{\"type\":\"ack\",\"event\":\"presence\",\"cursor\":1}"
                }) {
            assertInvalidClient(bad);
        }
    }

    @Test
    void integralNumbersAccepted() {
        assertEquals(57, ((Hello) ControlMessages.parseServerMessage(hello("57.0"))).cursor());
        assertEquals(57, ((Hello) ControlMessages.parseServerMessage(hello("5.7e1"))).cursor());
        assertEquals(-3, ((Hello) ControlMessages.parseServerMessage(hello("-3"))).cursor());
        assertEquals(0, ((Hello) ControlMessages.parseServerMessage(hello("-0.0"))).cursor());
    }

    @Test
    void fractionalAndNonFiniteNumbersRejected() {
        for (String bad : new String[] {
            "57.5", "0.1", "5.75e1", "1e-7", "NaN", "Infinity", "-Infinity", "1e400", "\"57\"", "true", "null"
        }) {
            assertInvalidServer(hello(bad));
        }
        assertInvalidServer("{\"event\":\"heartbeat\",\"data\":{\"timestamp\":1.5}}");
        assertInvalidClient("{\"type\":\"ack\",\"cursor\":1.5}");
        assertInvalidClient("{\"type\":\"ack\",\"cursor\":NaN}");
    }

    @Test
    void numbersBeyondSafeRangeRejected() {
        assertEquals(
                9007199254740991L, ((Hello) ControlMessages.parseServerMessage(hello("9007199254740991"))).cursor());
        assertEquals(
                -9007199254740991L, ((Hello) ControlMessages.parseServerMessage(hello("-9007199254740991"))).cursor());
        for (String bad : new String[] {
            "9007199254740992",
            "-9007199254740992",
            "9223372036854775807",
            "18446744073709551616",
            "9007199254740992.0",
            "9.007199254740993e15",
            "1e16"
        }) {
            assertInvalidServer(hello(bad));
        }
        assertInvalidClient("{\"type\":\"ack\",\"cursor\":9007199254740992}");
        assertThrows(WireException.class, () -> new Ack(ControlMessages.MAX_SAFE_INTEGER + 1));
        assertThrows(WireException.class, () -> new Heartbeat(Long.MIN_VALUE));
    }

    @Test
    void ackParsing() {
        ControlMessage m = ControlMessages.parseClientMessage("{\"type\":\"ack\",\"cursor\":64}");
        assertEquals(new Ack(64), m);
        assertEquals("{\"type\":\"ack\",\"cursor\":64}", ControlMessages.render(m));
        assertEquals(new Ack(64), ControlMessages.parseClientMessage("{\"cursor\":64.0,\"type\":\"ack\"}"));
        assertInvalidClient("{\"type\":\"ack\"}");
        assertInvalidClient("{\"type\":\"ack\",\"cursor\":\"64\"}");
        assertInvalidClient("{\"type\":\"ack\",\"cursor\":null}");
        // An ack is a client→server message: the server-side parser sees no event name.
        assertInvalidServer("{\"type\":\"ack\",\"cursor\":64}");
    }

    @Test
    void wakeParsing() {
        for (WakeReason r : WakeReason.values()) {
            String json = "{\"event\":\"sync\",\"data\":{\"cursor\":64,\"requiresPull\":true,\"reason\":\"" + r.wire()
                    + "\",\"timestamp\":1}}";
            ControlMessage m = ControlMessages.parseServerMessage(json);
            assertEquals(new Wake(64, r, 1), m);
            assertEquals(json, ControlMessages.render(m));
        }
        assertEquals("delta-too-large", WakeReason.DELTA_TOO_LARGE.wire());
    }

    @Test
    void unknownWakeReasonRejected() {
        assertInvalidServer("{\"event\":\"sync\",\"data\":{\"cursor\":1,\"requiresPull\":true,"
                + "\"reason\":\"payload-too-large\",\"timestamp\":0}}");
        assertInvalidServer("{\"event\":\"sync\",\"data\":{\"cursor\":1,\"requiresPull\":true,"
                + "\"reason\":\"CATCHUP_REQUIRED\",\"timestamp\":0}}");
        assertInvalidServer("{\"event\":\"sync\",\"data\":{\"cursor\":1,\"requiresPull\":true,\"timestamp\":0}}");
    }

    @Test
    void requiresPullMustBeLiteralTrue() {
        for (String rp : new String[] {"false", "1", "\"true\"", "null"}) {
            assertInvalidServer("{\"event\":\"sync\",\"data\":{\"cursor\":1,\"requiresPull\":" + rp
                    + ",\"reason\":\"reset-required\",\"timestamp\":0}}");
        }
        assertInvalidServer(
                "{\"event\":\"sync\",\"data\":{\"cursor\":1,\"reason\":\"reset-required\",\"timestamp\":0}}");
    }

    @Test
    void presenceFanoutKindsAndDocTie() {
        String join = "{\"event\":\"presence\",\"data\":{\"scopeKey\":\"project:p1\",\"kind\":\"update\","
                + "\"actorId\":\"a\",\"clientId\":\"c\",\"doc\":{\"x\":1.50,\"y\":[true,null]},\"timestamp\":5}}";
        PresenceFanout f = assertInstanceOf(PresenceFanout.class, ControlMessages.parseServerMessage(join));
        assertEquals(PresenceKind.UPDATE, f.kind());
        assertEquals(join, ControlMessages.render(f));

        String leave = "{\"event\":\"presence\",\"data\":{\"scopeKey\":\"project:p1\",\"kind\":\"leave\","
                + "\"actorId\":\"a\",\"clientId\":\"c\",\"doc\":null,\"timestamp\":5}}";
        PresenceFanout l = assertInstanceOf(PresenceFanout.class, ControlMessages.parseServerMessage(leave));
        assertNull(l.doc());
        assertEquals(leave, ControlMessages.render(l));

        // leave with a doc, leave without the doc key, join with a null / scalar doc: malformed.
        assertInvalidServer(leave.replace("\"doc\":null", "\"doc\":{\"x\":1}"));
        assertInvalidServer(leave.replace("\"doc\":null,", ""));
        assertInvalidServer(join.replace("\"doc\":{\"x\":1.50,\"y\":[true,null]}", "\"doc\":null"));
        assertInvalidServer(join.replace("\"doc\":{\"x\":1.50,\"y\":[true,null]}", "\"doc\":\"online\""));
        // Unknown kind (closed set), missing identity, missing timestamp.
        assertInvalidServer(join.replace("\"update\"", "\"snapshot\""));
        assertInvalidServer(join.replace("\"actorId\":\"a\",", ""));
        assertInvalidServer(join.replace(",\"timestamp\":5", ""));
        // The records enforce the same tie.
        ObjectNode doc = JsonNodeFactory.instance.objectNode().put("x", 1);
        assertThrows(WireException.class, () -> new PresenceFanout("project:p1", PresenceKind.LEAVE, "a", "c", doc, 1));
        assertThrows(WireException.class, () -> new PresenceFanout("project:p1", PresenceKind.JOIN, "a", "c", null, 1));
    }

    @Test
    void presenceErrorParsing() {
        for (PresenceErrorCode code : PresenceErrorCode.values()) {
            String json = "{\"event\":\"presence\",\"data\":{\"scopeKey\":\"project:p1\",\"error\":\"" + code.wire()
                    + "\",\"timestamp\":9}}";
            ControlMessage m = ControlMessages.parseServerMessage(json);
            assertEquals(new PresenceError("project:p1", code, 9), m);
            assertEquals(json, ControlMessages.render(m));
        }
        assertInvalidServer("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"project:p1\","
                + "\"error\":\"presence.rate_limited\",\"timestamp\":9}}");
        assertInvalidServer("{\"event\":\"presence\",\"data\":{\"scopeKey\":\"project:p1\","
                + "\"error\":\"presence.forbidden\",\"kind\":\"join\",\"timestamp\":9}}");
    }

    @Test
    void presencePublishParsing() {
        String publish = "{\"event\":\"presence\",\"data\":{\"scopeKey\":\"project:p1\",\"doc\":{\"cursor\":42}}}";
        PresencePublish p = assertInstanceOf(PresencePublish.class, ControlMessages.parseClientMessage(publish));
        assertFalse(p.isLeave());
        assertEquals(42, p.doc().get("cursor").intValue());
        assertEquals(publish, ControlMessages.render(p));

        String leave = "{\"event\":\"presence\",\"data\":{\"scopeKey\":\"project:p1\",\"doc\":null}}";
        PresencePublish l = assertInstanceOf(PresencePublish.class, ControlMessages.parseClientMessage(leave));
        assertTrue(l.isLeave());
        assertEquals(leave, ControlMessages.render(l));

        // Documents are copied: mutating the caller's node does not change the record.
        ObjectNode doc = JsonNodeFactory.instance.objectNode().put("a", 1);
        PresencePublish held = new PresencePublish("k:1", doc);
        doc.put("a", 2);
        held.doc().put("a", 3);
        assertEquals(1, held.doc().get("a").intValue());
    }

    @Test
    void errorMessagesAreStatic() {
        WireException e =
                assertThrows(WireException.class, () -> ControlMessages.parseServerMessage(hello("123456789.5")));
        assertFalse(e.getMessage().contains("123456789"));
        e = assertThrows(
                WireException.class,
                () -> ControlMessages.parseServerMessage(
                        "{\"event\":\"sync\",\"data\":{\"cursor\":1,\"requiresPull\":true,\"reason\":\"secret-reason\",\"timestamp\":0}}"));
        assertFalse(e.getMessage().contains("secret-reason"));
    }

    @Test
    void channelTags() {
        assertEquals(0x00, ChannelTag.DELTA);
        assertEquals(0x01, ChannelTag.ROUND);
        assertTrue(ChannelTag.isKnown(0x00));
        assertTrue(ChannelTag.isKnown(0x01));
        assertFalse(ChannelTag.isKnown(0x02));
        assertFalse(ChannelTag.isKnown(0xFF));
    }
}
