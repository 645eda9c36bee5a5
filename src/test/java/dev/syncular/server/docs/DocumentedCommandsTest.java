package dev.syncular.server.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.docs.DocBlocks.Block;
import dev.syncular.server.docs.DocBlocks.Kind;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Every command block of the documentation says who runs it exactly as written ({@link DocBlocks}): no shell block
 * without a {@code doc-test} marker, every {@code ci} block's commands present verbatim in {@code .ci/run}, every
 * walkthrough known to {@link DocumentedCommandsIT}, which runs them. A new command in a doc cannot drift unnoticed.
 */
class DocumentedCommandsTest {
    private static final Path ROOT = Path.of("");

    @Test
    void everyCommandBlockSaysWhoRunsIt() {
        List<String> unmarked = new ArrayList<>();
        for (Block b : DocBlocks.read(ROOT).blocks()) {
            if (b.command() && b.kind() == Kind.NONE) {
                unmarked.add(b.where() + " " + b.text().lines().findFirst().orElse(""));
            }
        }
        assertEquals(
                List.of(),
                unmarked,
                "command blocks need <!-- doc-test: ci | run <walkthrough> | not run: <reason> --> above the fence");
    }

    @Test
    void markersSitOnTheRightBlocks() {
        List<String> wrong = new ArrayList<>();
        for (Block b : DocBlocks.read(ROOT).blocks()) {
            boolean ok = switch (b.kind()) {
                case NONE, OUTPUT -> true;
                case CI, RUN, BACKGROUND -> b.command();
                case NOT_RUN -> b.command() && !b.until().isEmpty();
            };
            if (!ok) {
                wrong.add(b.where() + " " + b.kind());
            }
        }
        assertEquals(List.of(), wrong, "run/ci/not-run markers belong on command blocks, with a reason when not run");
    }

    @Test
    void ciRunsEveryCiBlockVerbatim() throws Exception {
        String ci = Files.readString(Path.of(".ci", "run"));
        List<String> missing = new ArrayList<>();
        int commands = 0;
        for (Block b : DocBlocks.read(ROOT).blocks()) {
            if (b.kind() != Kind.CI) {
                continue;
            }
            for (String command : b.commands()) {
                commands++;
                if (!ci.contains(command)) {
                    missing.add(b.where() + " " + command);
                }
            }
        }
        assertTrue(commands >= 2, "the quick start's two commands are ci blocks");
        assertEquals(List.of(), missing, ".ci/run runs these exactly as written");
    }

    @Test
    void everyWalkthroughHasItsFixture() {
        DocBlocks docs = DocBlocks.read(ROOT);
        assertEquals(new TreeSet<>(DocumentedCommandsIT.FIXTURES.keySet()), new TreeSet<>(docs.walkthroughs()));
        for (String w : docs.walkthroughs()) {
            List<Block> blocks = docs.walkthrough(w);
            assertTrue(
                    blocks.stream().anyMatch(b -> b.kind() == Kind.RUN),
                    w + " has a block to run in the foreground: " + blocks);
            assertTrue(blocks.get(0).kind() != Kind.OUTPUT, w + " starts with a command, not with its output");
        }
    }

    @Test
    void commandsAreTheLinesWithoutCommentsAndWithContinuationsJoined() {
        Block b = DocBlocks.parse(
                        Path.of("x.md"),
                        "<!-- doc-test: ci -->\n```sh\n# a comment\n./mvnw quarkus:dev   # run it\n"
                                + "java -jar a.jar \\\n  --help\n```\n")
                .get(0);
        assertEquals(Kind.CI, b.kind());
        assertEquals(List.of("./mvnw quarkus:dev", "java -jar a.jar --help"), b.commands());
        Block bg = DocBlocks.parse(
                        Path.of("x.md"),
                        "<!-- doc-test: run s3 background until-output Ctrl-C stops it -->\n```sh\nscripts/x.sh\n```\n")
                .get(0);
        assertEquals(Kind.BACKGROUND, bg.kind());
        assertEquals("s3", bg.walkthrough());
        assertEquals("output Ctrl-C stops it", bg.until());
    }
}
