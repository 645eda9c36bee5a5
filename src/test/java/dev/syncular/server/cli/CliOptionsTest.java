package dev.syncular.server.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.syncular.server.wire.PullHeader;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The CLI's command line (picocli): every option in its {@code --opt value} and {@code --opt=value} forms, options
 * anywhere on the line (before or after the command), {@code --} ending the options, {@code @file} and {@code -} left
 * to the command, and the generated {@code --help} of the program and of each command.
 */
class CliOptionsTest {

    record Run(int exit, String out, String err) {}

    /** The options and the words of the command (its name, then its arguments) the CLI's own command line parses. */
    record Parsed(CliOptions options, List<String> words) {}

    private static Parsed parse(String... args) {
        SyncularCli cli = new SyncularCli(System.out, System.err);
        CommandLine.ParseResult parsed = SyncularCli.commandLine(cli).parseArgs(args);
        List<String> words = new ArrayList<>();
        for (CommandLine.ParseResult p = parsed.subcommand(); p != null; p = p.subcommand()) {
            words.add(p.commandSpec().name());
            for (CommandLine.Model.PositionalParamSpec param : p.commandSpec().positionalParameters()) {
                words.addAll(param.originalStringValues());
            }
        }
        return new Parsed(cli.options, words);
    }

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
        Parsed spaced = parse(
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
                "s1");
        Parsed equals = parse(
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
                "pull",
                "--verbose",
                "s1");
        for (Parsed parsed : List.of(spaced, equals)) {
            CliOptions o = parsed.options();
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
            assertEquals(List.of("pull", "s1"), parsed.words());
        }
    }

    @Test
    void defaultsOptionsAnywhereAndTheEndOfOptions() {
        CliOptions d = parse("state").options();
        assertEquals("http://localhost:8080", d.url);
        assertEquals(Path.of("syncular-state.json"), d.state);
        assertEquals(PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS, d.accept);
        assertEquals(Map.of(), d.headers);

        Parsed mixed = parse("push", "--decode", "notes", "--url", "http://x", "@rows.json", "--url", "http://y");
        assertEquals(List.of("push", "notes", "@rows.json"), mixed.words(), "@file is the command's, not the parser's");
        assertTrue(mixed.options().decode);
        assertEquals("http://y", mixed.options().url, "the last of a repeated option wins");

        Parsed stdin = parse("push", "notes", "-");
        assertEquals(List.of("push", "notes", "-"), stdin.words());

        Parsed ended = parse("--decode", "push", "--", "--verbose", "-o");
        assertEquals(List.of("push", "--verbose", "-o"), ended.words());
        assertTrue(ended.options().decode);
        assertEquals(false, ended.options().verbose);

        Run endedBeforeTheCommand = run("--decode", "--", "render", "--verbose");
        assertEquals(SyncularCli.LOCAL_ERROR, endedBeforeTheCommand.exit());
        assertTrue(endedBeforeTheCommand.err().contains("the command goes before --"), endedBeforeTheCommand.err());
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
        Run argument = run("render");
        assertEquals(SyncularCli.LOCAL_ERROR, argument.exit());
        assertTrue(argument.err().contains("Missing required parameter: '<file>'"), argument.err());
        Run extra = run("state", "extra");
        assertEquals(SyncularCli.LOCAL_ERROR, extra.exit());
        assertTrue(extra.err().contains("'extra'"), extra.err());
        Run helpOfNothing = run("help", "frobnicate");
        assertEquals(SyncularCli.LOCAL_ERROR, helpOfNothing.exit());
        assertTrue(helpOfNothing.err().contains("unknown command 'frobnicate'"), helpOfNothing.err());
    }

    @Test
    void helpIsGeneratedFromTheOptions() {
        for (String[] args : List.of(
                new String[] {"--help"}, new String[] {"-h"}, new String[] {"help"}, new String[] {"--help", "pull"})) {
            Run help = run(args);
            assertEquals(0, help.exit(), List.of(args).toString());
            assertEquals("", help.err());
            assertTrue(
                    help.out().startsWith("Usage: java -jar syncular-cli.jar [options] <command> [arguments]"),
                    help.out());
            for (String line : List.of(
                    "Commands:",
                    "subscribe <id> <table>",
                    "push <table> <rows>",
                    "push <rows>",
                    "blob put <file>",
                    "blob get <blobId>",
                    "schema plan",
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

    @Test
    void eachCommandHasHelpOfItsOwn() {
        for (String[] args :
                List.of(new String[] {"pull", "--help"}, new String[] {"pull", "-h"}, new String[] {"help", "pull"})) {
            Run help = run(args);
            assertEquals(0, help.exit(), List.of(args).toString());
            assertEquals("", help.err());
            assertTrue(help.out().startsWith("Usage: java -jar syncular-cli.jar [options] pull [<id>...]"), help.out());
            for (String line : List.of(
                    "one round pulling the subscriptions",
                    "Arguments:",
                    "[<id>...]",
                    "Options:",
                    "--url=<url>",
                    "-h, --help",
                    "Exit status: 0; 1 when the server")) {
                assertTrue(help.out().contains(line), "no '" + line + "' in\n" + help.out());
            }
        }
        Run push = run("help", "push");
        assertTrue(
                push.out()
                        .startsWith("Usage: java -jar syncular-cli.jar [options] push <table> <rows>\n"
                                + "   or: java -jar syncular-cli.jar [options] push <rows>\n"),
                push.out());
        Run blob = run("blob", "--help");
        assertEquals(0, blob.exit());
        assertTrue(blob.out().contains("blob put <file>") && blob.out().contains("blob get <blobId>"), blob.out());
    }
}
