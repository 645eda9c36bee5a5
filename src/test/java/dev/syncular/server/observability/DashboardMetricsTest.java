package dev.syncular.server.observability;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.PrometheusScrape;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.MediaType;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PullHeader;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.SegmentInline;
import dev.syncular.server.wire.SegmentRef;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * The metrics an operator sees: every metric the shipped Grafana dashboard queries is exported on
 * {@code /q/metrics} after a scripted session, and the session moves the engine's counters by exactly what it
 * did — rounds, applied / conflicted / rejected / cached commits (§6.3, §2.3), operations per commit, rows by
 * lane (§4.5 incremental, §5.2 rows segments, §5.3 images), segment bytes by delivery (§5.7 inline, §5.5 direct)
 * and SQLite images built and reused. Real HTTP, real PostgreSQL.
 */
@QuarkusTest
class DashboardMetricsTest {
    private static final Path DASHBOARD = Path.of("helm", "syncular-server", "dashboards", "syncular.json");
    private static final Set<String> PROMQL_KEYWORDS = Set.of(
            "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset");

    @Inject
    SchemaWindow window;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    /** What the scripted session saw on the wire. */
    private record Session(int rounds, long changes, long inlineBytes, String rejectionCode, String conflictCode) {}

    @Test
    void everyDashboardMetricIsExported() throws IOException {
        Set<String> names = new TreeSet<>();
        for (JsonNode target :
                new ObjectMapper().readTree(Files.readString(DASHBOARD)).findValues("targets")) {
            target.forEach(t -> names.addAll(metricNames(t.get("expr").asText())));
        }
        assertTrue(names.size() >= 20, "metric names found in the dashboard: " + names);
        assertTrue(names.contains("syncular_sync_rounds_seconds_bucket"), names.toString());
        runSession();
        PrometheusScrape scrape = scrape();
        List<String> missing = names.stream().filter(n -> !scrape.exports(n)).toList();
        assertTrue(missing.isEmpty(), "queried by the dashboard but not exported: " + missing);
    }

    @Test
    void theSessionMovesTheCountersByExactlyWhatItDid() {
        PrometheusScrape before = scrape();
        Session s = runSession();
        PrometheusScrape after = scrape();
        assertEquals(ErrorCode.ROW_MISSING.code, s.rejectionCode());
        assertEquals(ErrorCode.VERSION_CONFLICT.code, s.conflictCode());

        assertEquals(6, s.rounds());
        assertEquals(s.rounds(), delta(before, after, "syncular_sync_rounds_seconds_count", Map.of("outcome", "ok")));
        assertEquals(
                4, delta(before, after, "syncular_push_commits_total", Map.of("outcome", "applied", "code", "none")));
        assertEquals(
                1, delta(before, after, "syncular_push_commits_total", Map.of("outcome", "cached", "code", "none")));
        assertEquals(
                1,
                delta(
                        before,
                        after,
                        "syncular_push_commits_total",
                        Map.of("outcome", "conflicted", "code", s.conflictCode())));
        assertEquals(
                1,
                delta(
                        before,
                        after,
                        "syncular_push_commits_total",
                        Map.of("outcome", "rejected", "code", s.rejectionCode())));
        assertEquals(4, delta(before, after, "syncular_push_commit_operations_count", Map.of()));
        assertEquals(4, delta(before, after, "syncular_push_commit_operations_sum", Map.of()));
        // a's bootstrap (3 rows) and b's (the same 3 rows), both inline; one incremental change (t1's update)
        assertEquals(6, delta(before, after, "syncular_pull_rows_total", Map.of("lane", "rows")));
        assertEquals(1, s.changes());
        assertEquals(s.changes(), delta(before, after, "syncular_pull_rows_total", Map.of("lane", "commits")));
        assertEquals(0, delta(before, after, "syncular_pull_rows_total", Map.of("lane", "image")));
        assertTrue(s.inlineBytes() > 0);
        assertEquals(
                s.inlineBytes(), delta(before, after, "syncular_segments_bytes_total", Map.of("delivery", "inline")));
        assertEquals(0, delta(before, after, "syncular_segments_bytes_total", Map.of("delivery", "direct")));
    }

    /**
     * Referenced delivery (§5.4, §5.5): a rows segment and SQLite images fetched through {@code GET /segments}
     * count their bytes as {@code direct}; the first image of a scope is built, the second client's is reused
     * (§5.3), and their rows count on the {@code image} lane.
     */
    @Test
    void referencedSegmentsAndSqliteImagesAreCounted() {
        String partition = "metrics-" + UUID.randomUUID();
        SyncTestClient a = client(partition, "alice");
        a.sync();
        a.upsert("todos", todo("t1", "one"), null);
        a.upsert("todos", todo("t2", "two"), null);
        a.upsert("todos", todo("t3", "three"), null);
        a.sync();

        PrometheusScrape before = scrape();
        SyncTestClient rows = client(partition, "carol");
        rows.accept = PullHeader.ACCEPT_EXTERNAL_ROWS;
        List<SyncTestClient> images = List.of(client(partition, "dave"), client(partition, "erin"));
        long fetched = 0;
        for (SyncTestClient c : List.of(rows, images.get(0), images.get(1))) {
            if (c != rows) {
                c.accept = PullHeader.ACCEPT_EXTERNAL_ROWS | PullHeader.ACCEPT_SQLITE;
                c.limitSnapshotRows = 1; // three rows are more than one page: the image lane
            }
            c.sync();
            c.sync();
            assertEquals(3, c.table("todos").size());
            fetched += c.segmentRefs.stream().mapToLong(SegmentRef::byteLength).sum();
        }
        PrometheusScrape after = scrape();
        assertEquals(MediaType.ROWS, rows.segmentRefs.get(0).mediaType());
        assertEquals(MediaType.SQLITE, images.get(1).segmentRefs.get(0).mediaType());
        assertEquals(fetched, delta(before, after, "syncular_segments_bytes_total", Map.of("delivery", "direct")));
        assertEquals(0, delta(before, after, "syncular_segments_bytes_total", Map.of("delivery", "inline")));
        assertEquals(3, delta(before, after, "syncular_pull_rows_total", Map.of("lane", "rows")));
        assertEquals(6, delta(before, after, "syncular_pull_rows_total", Map.of("lane", "image")));
        assertEquals(1, delta(before, after, "syncular_sqlite_images_total", Map.of("result", "built")));
        assertEquals(1, delta(before, after, "syncular_sqlite_images_total", Map.of("result", "reused")));
    }

    /**
     * Two clients in a fresh partition: a takes the log epoch, pushes three todos and bootstraps them; updates
     * t1, pushes a stale update of t1 (conflict) and an update of a row that does not exist (rejection) and
     * pulls the update incrementally; replays its first commit (cached); b takes the epoch and bootstraps.
     */
    private Session runSession() {
        String partition = "metrics-" + UUID.randomUUID();
        SyncTestClient a = client(partition, "alice");
        List<Message> responses = new ArrayList<>();
        responses.add(a.sync());
        a.upsert("todos", todo("t1", "one"), null);
        PushCommit first = a.outbox.get(0);
        a.upsert("todos", todo("t2", "two"), null);
        a.upsert("todos", todo("t3", "three"), null);
        responses.add(a.sync());
        long v1 = a.table("todos").get("t1").version();
        a.upsert("todos", Map.of("id", "t1", "list_id", "l1", "title", "one!"), v1);
        String stale = a.upsert("todos", Map.of("id", "t1", "list_id", "l1", "title", "one?"), v1);
        String ghost = a.upsert("todos", todo("t9", "ghost"), 5L);
        responses.add(a.sync());
        a.outbox.add(first);
        responses.add(a.sync());
        assertEquals(CommitStatus.CACHED, a.result(first.clientCommitId()).status());

        SyncTestClient b = client(partition, "bob");
        responses.add(b.sync());
        responses.add(b.sync());
        assertEquals(3, b.table("todos").size());

        long changes = 0;
        long inline = 0;
        for (Message m : responses) {
            for (Frame f : m.frames()) {
                if (f instanceof CommitFrame c) {
                    changes += c.changes().size();
                } else if (f instanceof SegmentInline s) {
                    inline += s.payload().length;
                }
            }
        }
        OpResult conflict = SyncTestClient.firstResult(a.result(stale));
        OpResult rejection = SyncTestClient.firstResult(a.result(ghost));
        return new Session(
                responses.size(),
                changes,
                inline,
                ((OpResult.Error) rejection).code(),
                ((OpResult.Conflict) conflict).code());
    }

    private SyncTestClient client(String partition, String actor) {
        return new SyncTestClient(
                        window.current(),
                        new HttpTransport("http://localhost:" + port, partition),
                        actor,
                        actor + "-" + UUID.randomUUID())
                .subscribe("todos", "todos", Map.of("list_id", List.of("l1")));
    }

    private static Map<String, Object> todo(String id, String title) {
        return Map.of("id", id, "list_id", "l1", "title", title, "done", false, "position", 1L, "updated_at_ms", 0L);
    }

    private static PrometheusScrape scrape() {
        return PrometheusScrape.scrape();
    }

    private static long delta(
            PrometheusScrape before, PrometheusScrape after, String name, Map<String, String> labels) {
        return Math.round(after.value(name, labels) - before.value(name, labels));
    }

    /**
     * The metric names of a PromQL expression: what is left once strings, label matchers, range selectors,
     * grouping label lists, function names and keywords are taken out.
     */
    static Set<String> metricNames(String expr) {
        String s = expr.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"", "\"\"")
                .replaceAll("\\{[^}]*}", " ")
                .replaceAll("\\[[^]]*]", " ")
                .replaceAll("\\b(by|without|on|ignoring|group_left|group_right)\\s*\\([^)]*\\)", " ");
        Set<String> names = new TreeSet<>();
        Matcher m = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*").matcher(s);
        while (m.find()) {
            String rest = s.substring(m.end()).stripLeading();
            if (!rest.startsWith("(") && !PROMQL_KEYWORDS.contains(m.group())) {
                names.add(m.group());
            }
        }
        return names;
    }

    @Test
    void metricNamesAreExtractedFromPromQl() {
        assertEquals(
                Set.of("a_seconds_bucket"),
                metricNames(
                        "histogram_quantile(0.95, sum by (le) (rate(a_seconds_bucket{job=~\"$job\",x=\"y(\"}[$__rate_interval])))"));
        assertEquals(
                Set.of("x_sum", "x_count"),
                metricNames("sum(rate(x_sum[5m])) / sum without (pod) (rate(x_count[5m]))"));
    }
}
