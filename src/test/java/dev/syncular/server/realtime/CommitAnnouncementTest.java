package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** The payloads of the §8.2 commit channel: one commit, a group transaction's commits, an epoch rotation (§2.1). */
class CommitAnnouncementTest {

    @Test
    void oneCommitAGroupsRangeAndAnEpochRotation() {
        assertEquals(
                new CommitNotifications.Announcement("p-1", 7, 7, false),
                CommitNotifications.Announcement.parse("p-1:7"));
        assertEquals(
                new CommitNotifications.Announcement("org:42", 3, 9, false),
                CommitNotifications.Announcement.parse("org:42:3-9"),
                "the partition is everything before the last colon");
        assertEquals(
                new CommitNotifications.Announcement("p", 0, -1, true),
                CommitNotifications.Announcement.parse("p:epoch"));
    }

    @Test
    void malformedOrImplausibleRangesAreIgnored() {
        assertNull(CommitNotifications.Announcement.parse("no-colon"));
        assertNull(CommitNotifications.Announcement.parse("p:x"));
        assertNull(CommitNotifications.Announcement.parse("p:9-3"), "backwards");
        assertNull(CommitNotifications.Announcement.parse("p:3-"));
        assertNull(
                CommitNotifications.Announcement.parse("p:1-" + (1 + CommitNotifications.MAX_ANNOUNCED)), "too long");
        assertEquals(
                CommitNotifications.MAX_ANNOUNCED,
                CommitNotifications.Announcement.parse("p:1-" + CommitNotifications.MAX_ANNOUNCED)
                        .last());
    }
}
