package dev.syncular.server.sync;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.storage.ClientRecord;
import org.junit.jupiter.api.Test;

/** The §4.5 client record write decision ({@link ClientRecords#mustSave}), without storage. */
class ClientRecordsTest {
    @Test
    void clientRecordComparisonIgnoresJsonFormatting() {
        ClientRecord stored = new ClientRecord(
                "p",
                "c",
                "a",
                5,
                1_000L,
                "[{\"id\": \"s\", \"table\": \"notes\", \"scopes\": {\"project_id\": [\"p1\"]}, \"schemaVersion\": 1}]",
                3,
                1);
        ClientRecord same = new ClientRecord(
                "p",
                "c",
                "a",
                5,
                2_000L,
                "[{\"id\":\"s\",\"scopes\":{\"project_id\":[\"p1\"]},\"schemaVersion\":1,\"table\":\"notes\"}]",
                3,
                1);
        assertFalse(ClientRecords.mustSave(stored, same, 2_000L));
        assertTrue(ClientRecords.mustSave(stored, same, 1_000L + ClientRecords.CLIENT_RECORD_REFRESH_MS));
        // a forward cursor move waits for CLIENT_CURSOR_REFRESH_MS; a backward one (reset) is written at once
        assertFalse(ClientRecords.mustSave(
                stored, new ClientRecord("p", "c", "a", 6, 2_000L, same.subscriptionsJson(), 3, 1), 2_000L));
        assertTrue(ClientRecords.mustSave(
                stored,
                new ClientRecord("p", "c", "a", 6, 2_000L, same.subscriptionsJson(), 3, 1),
                1_000L + ClientRecords.CLIENT_CURSOR_REFRESH_MS));
        assertTrue(ClientRecords.mustSave(
                stored, new ClientRecord("p", "c", "a", 4, 2_000L, same.subscriptionsJson(), 3, 1), 2_000L));
        assertTrue(ClientRecords.mustSave(
                stored, new ClientRecord("p", "c", "a", -1, 2_000L, same.subscriptionsJson(), 3, 1), 2_000L));
        assertTrue(ClientRecords.mustSave(
                stored,
                new ClientRecord(
                        "p", "c", "a", 5, 2_000L, same.subscriptionsJson().replace("p1", "p2"), 3, 1),
                2_000L));
        assertTrue(ClientRecords.mustSave(
                stored, new ClientRecord("p", "c", "a", 5, 2_000L, same.subscriptionsJson(), null, 1), 2_000L));
        // another schema version (§9): written at once, the plan of a schema change counts clients by it
        assertTrue(ClientRecords.mustSave(
                stored, new ClientRecord("p", "c", "a", 5, 2_000L, same.subscriptionsJson(), 3, 2), 2_000L));
        assertTrue(ClientRecords.mustSave(null, same, 2_000L));
    }
}
