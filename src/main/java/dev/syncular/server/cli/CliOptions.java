package dev.syncular.server.cli;

import dev.syncular.server.wire.PullHeader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The command line of {@link SyncularCli}, parsed by picocli: options (anywhere on the line, {@code --opt value} or
 * {@code --opt=value}; after {@code --} every word is positional) and the positional words (the command and its
 * arguments). {@code @file} words are not expanded by the parser: {@code push} reads them itself.
 */
@Command(
        name = "syncular",
        synopsisHeading = "",
        customSynopsis = "Usage: java -jar syncular-cli.jar [options] <command> [arguments]",
        optionListHeading = "%nOptions:%n",
        footerHeading = "%n",
        footer = {
            "Options may come anywhere on the line, as --opt <value> or --opt=<value>; after -- every word is an "
                    + "argument.",
            "",
            "Exit status: 0; 1 when the server answered an HTTP error (its JSON on stdout); 2 on a " + "local error."
        },
        sortOptions = false,
        usageHelpWidth = 110)
final class CliOptions {
    private static final String COMMANDS_SECTION = "commands";
    private static final String COMMANDS = """

            Commands:
              subscribe <id> <table> [<variable>=<value>[,<value>...]]...
                                     add (or replace) a subscription in the state file
              unsubscribe <id>       remove it
              push <table> <rows>    push rows in one commit, with a pull of every subscription; <rows> is JSON
                                     text, @file or - (stdin): an object or an array of them.
                                     {"col":value,...} upserts those columns (the primary key among them;
                                     a new row needs every column, null for none), "$baseVersion":n
                                     makes it conditional, {"$delete":<key>} deletes
              push <rows>            one commit over several tables: every row names its table, "$table":"notes"
                                     (also allowed with push <table> <rows>, overriding <table> for that row)
              pull [<id>...]         one round pulling the subscriptions (all when none is named)
              bootstrap [<id>...]    start the subscriptions over and round until their bootstrap is complete
              watch [<id>...]        one pull, then the realtime socket (§8): prints every control message and
                                     every delta as it arrives (with --decode, the changed rows), applies and
                                     acknowledges deltas, pulls on a wake-up; ends when the socket closes or
                                     after --count <n> deltas
              query <operationId> [<params>]
                                     run a registered query (POST <mount>/operations, REMOTE.md); <params> is
                                     JSON text, @file or - ({"$integer":"n"} and {"$bytes":"<base64>"} for
                                     those types); prints the rows and maxCommitSeq
              command <operationId> <requestId> [<params>]
                                     run a registered command; prints its status, commitSeq and results
              segment <segmentId>    download a segment (GET <mount>/segments/{id}) with --sub or --scopes;
                                     prints it (a rows segment) or writes it to --out
              blob put <file>        upload a blob (PUT <mount>/blobs/{id}) and print its BlobRef
              blob get <blobId>      download a blob to --out (else stdout)
              render <file>          print a saved SSP2 message or SSG2 rows segment as debug JSON
              state                  print the state file
              help                   print this text (also -h, --help)
            """;

    @Option(
            names = "--url",
            order = 1,
            paramLabel = "<url>",
            description = "the server, including its mount (default ${DEFAULT-VALUE})")
    String url = "http://localhost:8080";

    @Option(
            names = "--schema",
            order = 2,
            paramLabel = "<file>",
            description = "the schema IR the server serves (push, pull, bootstrap)")
    Path schema;

    /** §5.10.1 {@code crdtType} names the schema may use besides the built-in {@code yjs-doc} ({@code --crdt-types}). */
    final Set<String> crdtTypes = new LinkedHashSet<>();

    @Option(
            names = "--state",
            order = 4,
            paramLabel = "<file>",
            description = "the client state file (default ${DEFAULT-VALUE})")
    Path state = Path.of("syncular-state.json");

    @Option(
            names = "--client-id",
            order = 5,
            paramLabel = "<id>",
            description = "the client id of a new state file (default cli-<random hex>)")
    String clientId;

    final Map<String, String> headers = new LinkedHashMap<>();
    int accept = PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS;

    @Option(
            names = "--limit-commits",
            order = 11,
            paramLabel = "<n>",
            description = "the pull limit on commits (default 0: the server's)")
    int limitCommits;

    @Option(
            names = "--limit-snapshot-rows",
            order = 12,
            paramLabel = "<n>",
            description = "the pull limit on snapshot rows (default 0: the server's)")
    int limitSnapshotRows;

    @Option(
            names = "--max-snapshot-pages",
            order = 13,
            paramLabel = "<n>",
            description = "the pull limit on snapshot pages (default 0: the server's)")
    int maxSnapshotPages;

    @Option(
            names = "--decode",
            order = 14,
            description = "print the rows too: commit changes with values, rows segments, and each push conflict with "
                    + "its serverRow values and conflictColumns names")
    boolean decode;

    @Option(
            names = "--sub",
            order = 15,
            paramLabel = "<id>",
            description = "segment: re-authorize with this subscription's scopes")
    String sub;

    @Option(
            names = "--scopes",
            order = 16,
            paramLabel = "<json>",
            description = "segment: re-authorize with these scopes, e.g. {\"project_id\":[\"p1\"]}")
    String scopes;

    @Option(
            names = {"-o", "--out"},
            order = 17,
            paramLabel = "<file>",
            description = "segment, blob get: write the bytes to a file")
    Path out;

    @Option(
            names = "--media-type",
            order = 18,
            paramLabel = "<type>",
            description = "blob put: the Content-Type to store")
    String mediaType;

    /** {@code watch}: stop after this many deltas; 0 = until the socket closes or the process is stopped. */
    @Option(
            names = "--count",
            order = 19,
            paramLabel = "<n>",
            description = "watch: stop after this many deltas (default 0: never)")
    int count;

    @Option(
            names = {"-v", "--verbose"},
            order = 20,
            description = "print each request (debug JSON, HTTP lines and headers) on stderr")
    boolean verbose;

    @Option(
            names = {"-h", "--help"},
            order = 21,
            usageHelp = true,
            description = "print this text")
    boolean help;

    @Parameters(paramLabel = "<command> [arguments]", description = "the command and its arguments (see Commands)")
    List<String> positional;

    final List<String> words = new ArrayList<>();

    @Option(
            names = "--crdt-types",
            order = 3,
            paramLabel = "<list>",
            description = "crdtType names the schema's crdt columns may use besides yjs-doc, the server's own mergers "
                    + "(comma-separated, repeatable); the CLI never merges, it sends crdt values as base64 bytes")
    void crdtTypes(String value) {
        for (String t : value.split(",")) {
            if (t.isBlank()) {
                throw new IllegalArgumentException("--crdt-types takes crdtType names, comma-separated");
            }
            crdtTypes.add(t.trim());
        }
    }

    @Option(
            names = "--actor",
            order = 6,
            paramLabel = "<id>",
            description = "x-actor-id header (the development authenticator)")
    void actor(String value) {
        headers.put("x-actor-id", value);
    }

    @Option(
            names = "--partition",
            order = 7,
            paramLabel = "<id>",
            description = "x-syncular-partition header (the development authenticator)")
    void partition(String value) {
        headers.put("x-syncular-partition", value);
    }

    @Option(names = "--token", order = 8, paramLabel = "<token>", description = "Authorization: Bearer <token>")
    void token(String value) {
        headers.put("Authorization", "Bearer " + value);
    }

    @Option(
            names = {"-H", "--header"},
            order = 9,
            paramLabel = "<h>",
            description = "any header, 'Name: value' (repeatable)")
    void header(String value) {
        int colon = value.indexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("a header is 'Name: value', not '" + value + "'");
        }
        headers.put(value.substring(0, colon).trim(), value.substring(colon + 1).trim());
    }

    @Option(
            names = "--accept",
            order = 10,
            paramLabel = "<list>",
            description = "inline,external,sqlite,signed-urls (default inline,external)")
    void accept(String list) {
        int bits = 0;
        for (String s : list.split(",")) {
            bits |= switch (s.trim()) {
                case "inline" -> PullHeader.ACCEPT_INLINE_ROWS;
                case "external" -> PullHeader.ACCEPT_EXTERNAL_ROWS;
                case "sqlite" -> PullHeader.ACCEPT_SQLITE;
                case "signed-urls" -> PullHeader.ACCEPT_SIGNED_URLS;
                default ->
                    throw new IllegalArgumentException(
                            "--accept takes inline, external, sqlite and " + "signed-urls, not '" + s + "'");
            };
        }
        accept = bits;
    }

    /** Parses {@code args}; a usage error is an {@link IllegalArgumentException} naming it. */
    static CliOptions parse(String[] args) {
        CliOptions o = new CliOptions();
        try {
            commandLine(o).parseArgs(args);
        } catch (CommandLine.ParameterException e) {
            throw new IllegalArgumentException(usageError(e), e);
        }
        if (o.positional != null) {
            o.words.addAll(o.positional);
        }
        if (o.help) {
            o.words.add(0, "help");
        }
        return o;
    }

    /** The generated usage text: synopsis, commands, options, exit status. */
    static String usage() {
        return commandLine(new CliOptions()).getUsageMessage(CommandLine.Help.Ansi.OFF);
    }

    private static CommandLine commandLine(CliOptions o) {
        CommandLine cl = new CommandLine(o).setExpandAtFiles(false).setOverwrittenOptionsAllowed(true);
        cl.getHelpSectionMap().put(COMMANDS_SECTION, help -> COMMANDS);
        List<String> keys = new ArrayList<>(cl.getHelpSectionKeys());
        keys.add(keys.indexOf(CommandLine.Model.UsageMessageSpec.SECTION_KEY_SYNOPSIS) + 1, COMMANDS_SECTION);
        keys.remove(CommandLine.Model.UsageMessageSpec.SECTION_KEY_PARAMETER_LIST_HEADING);
        keys.remove(CommandLine.Model.UsageMessageSpec.SECTION_KEY_PARAMETER_LIST);
        cl.setHelpSectionKeys(keys);
        return cl;
    }

    /** The parser's message, or the option's own message when one of the setters above refused a value. */
    private static String usageError(CommandLine.ParameterException e) {
        for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
            if (t instanceof IllegalArgumentException && t.getMessage() != null) {
                return t.getMessage();
            }
        }
        return e.getMessage() + " (see --help)";
    }

    /** The positional word at {@code index}, or a usage error naming it. */
    String word(int index, String what) {
        if (words.size() <= index) {
            throw new IllegalArgumentException("missing " + what + " (see --help)");
        }
        return words.get(index);
    }
}
