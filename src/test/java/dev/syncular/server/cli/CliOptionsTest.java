package dev.syncular.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.wire.PullHeader;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The CLI's command line (picocli): every option in its {@code --opt value} and {@code --opt=value} forms, options
 * anywhere on the line, {@code --} ending the options, {@code @file} and {@code -} left to the command, and the
 * generated {@code --help}.
 */
class CliOptionsTest {

    record Run(int exit, String out, String err) {}

    private static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = SyncularCli.run(
                args,
                new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void equalsFormAndSpaceFormSetTheSameValues() {
        CliOptions spaced = CliOptions.parse(new String[] {
            "--url",
            "http://h:1/sync",
            "--schema",
            "s.json",
            "--state",
            "st.json",
            "--client-id",
            "c1",
            "--actor",
            "alice",
            "--partition",
            "p",
            "--token",
            "t",
            "-H",
            "X-A: 1",
            "--accept",
            "inline,sqlite",
            "--limit-commits",
            "5",
            "--limit-snapshot-rows",
            "6",
            "--max-snapshot-pages",
            "7",
            "--sub",
            "s1",
            "--scopes",
            "{}",
            "-o",
            "o.bin",
            "--media-type",
            "text/plain",
            "--count",
            "3",
            "--crdt-types",
            "a,b",
            "--decode",
            "-v",
            "pull",
            "s1"
        });
        CliOptions equals = CliOptions.parse(new String[] {
            "--url=http://h:1/sync",
            "--schema=s.json",
            "--state=st.json",
            "--client-id=c1",
            "--actor=alice",
            "--partition=p",
            "--token=t",
            "--header=X-A: 1",
            "--accept=inline,sqlite",
            "--limit-commits=5",
            "--limit-snapshot-rows=6",
            "--max-snapshot-pages=7",
            "--sub=s1",
            "--scopes={}",
            "--out=o.bin",
            "--media-type=text/plain",
            "--count=3",
            "--crdt-types=a,b",
            "--decode",
            "--verbose",
            "pull",
            "s1"
        });
        for (CliOptions o : List.of(spaced, equals)) {
            assertEquals("http://h:1/sync", o.url);
            assertEquals(Path.of("s.json"), o.schema);
            assertEquals(Path.of("st.json"), o.state);
            assertEquals("c1", o.clientId);
            assertEquals(
                    Map.of("x-actor-id", "alice", "x-syncular-partition", "p", "Authorization", "Bearer t", "X-A", "1"),
                    o.headers);
            assertEquals(PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_SQLITE, o.accept);
            assertEquals(5, o.limitCommits);
            assertEquals(6, o.limitSnapshotRows);
            assertEquals(7, o.maxSnapshotPages);
            assertEquals("s1", o.sub);
            assertEquals("{}", o.scopes);
            assertEquals(Path.of("o.bin"), o.out);
            assertEquals("text/plain", o.mediaType);
            assertEquals(3, o.count);
            assertEquals(List.of("a", "b"), List.copyOf(o.crdtTypes));
            assertTrue(o.decode);
            assertTrue(o.verbose);
            assertEquals(List.of("pull", "s1"), o.words);
        }
    }

    @Test
    void defaultsOptionsAnywhereAndTheEndOfOptions() {
        CliOptions d = CliOptions.parse(new String[] {"state"});
        assertEquals("http://localhost:8080", d.url);
        assertEquals(Path.of("syncular-state.json"), d.state);
        assertEquals(PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS, d.accept);
        assertEquals(Map.of(), d.headers);

        CliOptions mixed = CliOptions.parse(
                new String[] {"push", "--decode", "notes", "--url", "http://x", "@rows.json", "--url", "http://y"});
        assertEquals(List.of("push", "notes", "@rows.json"), mixed.words, "@file is the command's, not the parser's");
        assertTrue(mixed.decode);
        assertEquals("http://y", mixed.url, "the last of a repeated option wins");

        CliOptions stdin = CliOptions.parse(new String[] {"push", "notes", "-"});
        assertEquals(List.of("push", "notes", "-"), stdin.words);

        CliOptions ended = CliOptions.parse(new String[] {"--decode", "--", "render", "--verbose", "-o"});
        assertEquals(List.of("render", "--verbose", "-o"), ended.words);
        assertTrue(ended.decode);
        assertEquals(false, ended.verbose);
    }

    @Test
    void usageErrorsAreLocalErrorsNamingTheProblem() {
        Run unknown = run("--nope", "state");
        assertEquals(SyncularCli.LOCAL_ERROR, unknown.exit());
        assertTrue(unknown.err().contains("--nope") && unknown.err().contains("see --help"), unknown.err());
        Run missing = run("pull", "--url");
        assertEquals(SyncularCli.LOCAL_ERROR, missing.exit());
        assertTrue(missing.err().contains("--url"), missing.err());
        Run header = run("-H", "no-colon", "state");
        assertEquals(SyncularCli.LOCAL_ERROR, header.exit());
        assertTrue(header.err().contains("a header is 'Name: value', not 'no-colon'"), header.err());
        Run accept = run("--accept=inline,zip", "state");
        assertEquals(SyncularCli.LOCAL_ERROR, accept.exit());
        assertTrue(accept.err().contains("not 'zip'"), accept.err());
        Run number = run("--count=many", "watch");
        assertEquals(SyncularCli.LOCAL_ERROR, number.exit());
        assertTrue(number.err().contains("--count") && number.err().contains("many"), number.err());
        Run crdt = run("--crdt-types", "a,,b", "state");
        assertEquals(SyncularCli.LOCAL_ERROR, crdt.exit());
        assertTrue(crdt.err().contains("--crdt-types takes crdtType names"), crdt.err());
        Run command = run("frobnicate");
        assertEquals(SyncularCli.LOCAL_ERROR, command.exit());
        assertTrue(command.err().contains("unknown command 'frobnicate'"), command.err());
    }

    @Test
    void helpIsGeneratedFromTheOptions() {
        for (String[] args : List.of(
                new String[] {"--help"}, new String[] {"-h"}, new String[] {"help"}, new String[] {"pull", "--help"})) {
            Run help = run(args);
            assertEquals(0, help.exit(), List.of(args).toString());
            assertEquals("", help.err());
            assertTrue(
                    help.out().startsWith("Usage: java -jar syncular-cli.jar [options] <command> [arguments]"),
                    help.out());
            for (String line : List.of(
                    "Commands:",
                    "subscribe <id> <table>",
                    "render <file>",
                    "Options:",
                    "--url=<url>",
                    "the server, including its mount (default http://localhost:8080)",
                    "--state=<file>",
                    "(default syncular-state.json)",
                    "-H, --header=<h>",
                    "-o, --out=<file>",
                    "--crdt-types=<list>",
                    "-v, --verbose",
                    "-h, --help",
                    "Exit status: 0; 1 when the server")) {
                assertTrue(help.out().contains(line), "no '" + line + "' in\n" + help.out());
            }
        }
        Run none = run();
        assertEquals(SyncularCli.LOCAL_ERROR, none.exit());
        assertEquals("", none.out());
        assertTrue(none.err().startsWith("Usage: "), none.err());
    }
}
