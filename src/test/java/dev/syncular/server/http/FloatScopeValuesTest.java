package dev.syncular.server.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.syncular.server.errors.ErrorCode;
import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.testsupport.HttpTransport;
import dev.syncular.server.testsupport.OwnApp;
import dev.syncular.server.testsupport.SyncTestClient;
import dev.syncular.server.wire.Change;
import dev.syncular.server.wire.CommitFrame;
import dev.syncular.server.wire.CommitStatus;
import dev.syncular.server.wire.Frame;
import dev.syncular.server.wire.Message;
import dev.syncular.server.wire.OpResult;
import dev.syncular.server.wire.PushResult;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

/**
 * §3.1, §3.4: a {@code float} scope column's value is a scope value as the JavaScript and Rust clients write it,
 * ECMAScript {@code Number::toString} — 2.0 is {@code "2"}, 1e21 is {@code "1e+21"} — so an insert under a grant
 * of {@code ["2"]} is authorized, stored under that scope, and pulled back under it; and §6.8: a whole-commit
 * validator bean ({@link LevelScanValidator}) scanning the candidate state by that column's scope values finds the
 * rows JavaScript's text names, while a text no float prints ({@code "2.0"}, {@code "1e21"}, {@code "abc"}) finds
 * none. Real HTTP rounds through the running app with the development authenticator's allowed scopes
 * ({@code syncular.dev-auth.allowed-scopes}).
 */
@QuarkusTest
@OwnApp
@TestProfile(FloatScopeValuesTest.Profile.class)
class FloatScopeValuesTest {
    static final String TABLE = "readings";
    static final Map<String, List<String>> GRANT = Map.of("level", List.of("2", "1e+21"));

    /** The one-table schema whose scope column is a float, and a grant of exactly {@link #GRANT}. */
    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "syncular.schema.path",
                    Path.of("src/test/resources/schema/float-scope.json")
                            .toAbsolutePath()
                            .toString(),
                    "syncular.storage.pg-schema",
                    "float_scope_"
                            + UUID.randomUUID().toString().replace("-", "").substring(0, 10),
                    "syncular.dev-auth.allowed-scopes",
                    "{\"level\":[\"2\",\"1e+21\"]}");
        }

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(LevelScanValidator.class);
        }
    }

    @Inject
    SchemaWindow window;

    @ConfigProperty(name = "quarkus.http.test-port")
    int port;

    private final String partition = "float-scope-" + UUID.randomUUID();

    private SyncTestClient client(String actor) {
        return new SyncTestClient(
                window.current(),
                new HttpTransport("http://localhost:" + port, partition),
                actor,
                actor + "-" + UUID.randomUUID());
    }

    private static PushResult push(SyncTestClient c, String id, double level) {
        return push(c, id, level, "level " + level);
    }

    private static PushResult push(SyncTestClient c, String id, double level, String note) {
        String commit = c.upsert(TABLE, Map.of("id", id, "level", level, "note", note), null);
        c.syncUntilIdle();
        return c.result(commit);
    }

    /** The row ids {@link LevelScanValidator} saw scanning {@code level = text} in a commit inserting {@code probe}. */
    private static String scanned(SyncTestClient c, double probeLevel, String text) {
        PushResult r = push(c, "probe", probeLevel, LevelScanValidator.PROBE + text);
        assertEquals(CommitStatus.REJECTED, r.status(), r.toString());
        OpResult.Error e = (OpResult.Error) SyncTestClient.firstResult(r);
        assertEquals("app.scan", e.code(), "the validator's own rejection, not a failure of its scan: " + e);
        return e.message();
    }

    @Test
    void floatScopeValuesAreAuthorizedStoredAndPulledAsJavaScriptPrintsThem() {
        SyncTestClient follower = client("follower").subscribe("s", TABLE, GRANT);
        follower.syncUntilIdle(); // bootstrapped (empty): the rows below arrive as COMMIT frames

        SyncTestClient writer = client("writer");
        assertEquals(CommitStatus.APPLIED, push(writer, "two", 2.0).status(), "2.0 is scope value \"2\"");
        assertEquals(CommitStatus.APPLIED, push(writer, "big", 1e21).status(), "1e21 is scope value \"1e+21\"");
        PushResult refused = push(writer, "half", 2.5);
        assertEquals(CommitStatus.REJECTED, refused.status(), refused.toString());
        assertEquals(ErrorCode.FORBIDDEN.code, ((OpResult.Error) SyncTestClient.firstResult(refused)).code());

        // Incremental pull (§4.5): each change carries the stored scopes (§3.1) the log is indexed by.
        Message delta = follower.sync();
        List<Map<String, String>> scopes = new ArrayList<>();
        for (Frame f : delta.frames()) {
            if (f instanceof CommitFrame c) {
                for (Change ch : c.changes()) {
                    scopes.add(ch.scopes());
                }
            }
        }
        assertEquals(List.of(Map.of("level", "2"), Map.of("level", "1e+21")), scopes);
        assertEquals(List.of("big", "two"), List.copyOf(follower.table(TABLE).keySet()));

        // Bootstrap (§4.7) under the grant: the row-scope index holds the same text.
        SyncTestClient reader = client("reader").subscribe("s", TABLE, Map.of("level", List.of("2")));
        reader.syncUntilIdle();
        assertEquals(List.of("two"), List.copyOf(reader.table(TABLE).keySet()));
        assertEquals(2.0, reader.table(TABLE).get("two").values()[1]);
    }

    @Test
    void aWholeCommitValidatorScansCandidatesByFloatScopeValuesAsJavaScriptPrintsThem() {
        SyncTestClient writer = client("writer");
        assertEquals(CommitStatus.APPLIED, push(writer, "two", 2.0).status());
        assertEquals(CommitStatus.APPLIED, push(writer, "big", 1e21).status());

        // §6.8 final candidate state: the commit's own staged row and the stored ones.
        assertEquals("probe,two", scanned(writer, 2.0, "2"));
        assertEquals("big,probe", scanned(writer, 1e21, "1e+21"));
        assertEquals("two", scanned(writer, 1e21, "2"));
        // A text no float prints is no row's scope value: an empty scan (formerly the storage refused the text and
        // the commit was rejected sync.constraint_violation, "whole-commit validator failed").
        for (String none : List.of("2.0", "1e21", "02", "abc", "")) {
            assertEquals("none", scanned(writer, 2.0, none), "level = \"" + none + "\"");
        }
    }
}
