package dev.syncular.server.cli;

import dev.syncular.server.wire.PullHeader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.PositionalParamSpec;
import picocli.CommandLine.Model.UsageMessageSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * The options of {@link SyncularCli}, parsed by picocli: every one is inherited by every command, so it may come
 * anywhere on the line (before or after the command, {@code --opt value} or {@code --opt=value}; after {@code --}
 * every word is an argument of the command). {@code @file} words are not expanded by the parser: {@code push} reads
 * them itself.
 */
final class CliOptions {
    /** How the usage texts name the program. */
    static final String INVOCATION = "java -jar syncular-cli.jar [options] ";

    private static final String[] FOOTER = {
        "Options may come anywhere on the line, as --opt <value> or --opt=<value>; after -- every word is an argument"
                + " of the command.",
        "",
        "Exit status: 0; 1 when the server answered an HTTP error (its JSON on stdout); 2 on a local error."
    };
    private static final int USAGE_WIDTH = 110;
    /** Where a command's description starts in the list of commands. */
    private static final int COMMAND_COLUMN = 24;

    @Option(
            scope = ScopeType.INHERIT,
            names = "--url",
            order = 1,
            paramLabel = "<url>",
            description = "the server, including its mount (default ${DEFAULT-VALUE})")
    String url = "http://localhost:8080";

    @Option(
            scope = ScopeType.INHERIT,
            names = "--schema",
            order = 2,
            paramLabel = "<file>",
            description = "the schema IR the server serves (push, pull, bootstrap); schema plan: the new document")
    Path schema;

    /** §5.10.1 {@code crdtType} names the schema may use besides the built-in {@code yjs-doc} ({@code --crdt-types}). */
    final Set<String> crdtTypes = new LinkedHashSet<>();

    @Option(
            scope = ScopeType.INHERIT,
            names = "--state",
            order = 4,
            paramLabel = "<file>",
            description = "the client state file (default ${DEFAULT-VALUE})")
    Path state = Path.of("syncular-state.json");

    @Option(
            scope = ScopeType.INHERIT,
            names = "--client-id",
            order = 5,
            paramLabel = "<id>",
            description = "the client id of a new state file (default cli-<random hex>)")
    String clientId;

    final Map<String, String> headers = new LinkedHashMap<>();
    int accept = PullHeader.ACCEPT_INLINE_ROWS | PullHeader.ACCEPT_EXTERNAL_ROWS;

    @Option(
            scope = ScopeType.INHERIT,
            names = "--limit-commits",
            order = 11,
            paramLabel = "<n>",
            description = "the pull limit on commits (default 0: the server's)")
    int limitCommits;

    @Option(
            scope = ScopeType.INHERIT,
            names = "--limit-snapshot-rows",
            order = 12,
            paramLabel = "<n>",
            description = "the pull limit on snapshot rows (default 0: the server's)")
    int limitSnapshotRows;

    @Option(
            scope = ScopeType.INHERIT,
            names = "--max-snapshot-pages",
            order = 13,
            paramLabel = "<n>",
            description = "the pull limit on snapshot pages (default 0: the server's)")
    int maxSnapshotPages;

    @Option(
            scope = ScopeType.INHERIT,
            names = "--decode",
            order = 14,
            description = "print the rows too: commit changes with values, rows segments, and each push conflict with "
                    + "its serverRow values and conflictColumns names")
    boolean decode;

    @Option(
            scope = ScopeType.INHERIT,
            names = "--sub",
            order = 15,
            paramLabel = "<id>",
            description = "segment: re-authorize with this subscription's scopes")
    String sub;

    @Option(
            scope = ScopeType.INHERIT,
            names = "--scopes",
            order = 16,
            paramLabel = "<json>",
            description = "segment: re-authorize with these scopes, e.g. {\"project_id\":[\"p1\"]}")
    String scopes;

    @Option(
            scope = ScopeType.INHERIT,
            names = {"-o", "--out"},
            order = 17,
            paramLabel = "<file>",
            description = "segment, blob get: write the bytes to a file")
    Path out;

    @Option(
            scope = ScopeType.INHERIT,
            names = "--media-type",
            order = 18,
            paramLabel = "<type>",
            description = "blob put: the Content-Type to store")
    String mediaType;

    /** {@code watch}: stop after this many deltas; 0 = until the socket closes or the process is stopped. */
    @Option(
            scope = ScopeType.INHERIT,
            names = "--count",
            order = 19,
            paramLabel = "<n>",
            description = "watch: stop after this many deltas (default 0: never)")
    int count;

    @Option(
            scope = ScopeType.INHERIT,
            names = {"-v", "--verbose"},
            order = 20,
            description = "print each request (debug JSON, HTTP lines and headers) on stderr")
    boolean verbose;

    @Option(
            scope = ScopeType.INHERIT,
            names = {"-h", "--help"},
            order = 21,
            usageHelp = true,
            description = "print this text (after a command: that command's)")
    boolean help;

    @Option(
            scope = ScopeType.INHERIT,
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
            scope = ScopeType.INHERIT,
            names = "--actor",
            order = 6,
            paramLabel = "<id>",
            description = "x-actor-id header (the development authenticator)")
    void actor(String value) {
        headers.put("x-actor-id", value);
    }

    @Option(
            scope = ScopeType.INHERIT,
            names = "--partition",
            order = 7,
            paramLabel = "<id>",
            description = "x-syncular-partition header (the development authenticator)")
    void partition(String value) {
        headers.put("x-syncular-partition", value);
    }

    @Option(
            scope = ScopeType.INHERIT,
            names = "--token",
            order = 8,
            paramLabel = "<token>",
            description = "Authorization: Bearer <token>")
    void token(String value) {
        headers.put("Authorization", "Bearer " + value);
    }

    @Option(
            scope = ScopeType.INHERIT,
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
            scope = ScopeType.INHERIT,
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

    /**
     * Lays out the usage texts of {@code line} (the program) and of its commands: one width, the options in the order
     * above, the exit statuses as a footer, no colours. A command's synopsis is its forms: its {@code customSynopsis}
     * (what follows the command's name), else its name and arguments; the list of commands comes first, each command
     * with its forms and its description (a command with commands of its own, {@code blob}, by theirs).
     */
    static CommandLine lay(CommandLine line) {
        Map<CommandSpec, List<String>> forms = new IdentityHashMap<>();
        for (CommandLine c : line.getSubcommands().values()) {
            forms(c, forms);
        }
        lay(line, forms);
        return line.setColorScheme(CommandLine.Help.defaultColorScheme(CommandLine.Help.Ansi.OFF));
    }

    private static void lay(CommandLine c, Map<CommandSpec, List<String>> forms) {
        UsageMessageSpec usage = c.getCommandSpec().usageMessage();
        usage.width(USAGE_WIDTH)
                .sortOptions(false)
                .commandListHeading("%nCommands:%n")
                .parameterListHeading("%nArguments:%n")
                .optionListHeading("%nOptions:%n")
                .footerHeading("%n")
                .footer(FOOTER);
        List<String> own = forms.get(c.getCommandSpec());
        if (own != null) {
            List<String> synopsis = new ArrayList<>();
            for (String form : own) {
                synopsis.add((synopsis.isEmpty() ? "Usage: " : "   or: ") + INVOCATION + form);
            }
            usage.synopsisHeading("")
                    .customSynopsis(synopsis.toArray(String[]::new))
                    .descriptionHeading("%n");
        }
        if (!c.getSubcommands().isEmpty()) {
            c.getHelpSectionMap().put(UsageMessageSpec.SECTION_KEY_COMMAND_LIST, help -> commandList(c, forms));
            List<String> keys = new ArrayList<>(c.getHelpSectionKeys());
            keys.remove(UsageMessageSpec.SECTION_KEY_COMMAND_LIST_HEADING);
            keys.remove(UsageMessageSpec.SECTION_KEY_COMMAND_LIST);
            int at = keys.indexOf(UsageMessageSpec.SECTION_KEY_DESCRIPTION) + 1;
            keys.addAll(
                    at,
                    List.of(
                            UsageMessageSpec.SECTION_KEY_COMMAND_LIST_HEADING,
                            UsageMessageSpec.SECTION_KEY_COMMAND_LIST));
            c.setHelpSectionKeys(keys);
        }
        for (CommandLine sub : c.getSubcommands().values()) {
            lay(sub, forms);
        }
    }

    /** The forms of command {@code c} (from the program's name on, e.g. {@code blob put <file>}), into {@code all}. */
    private static List<String> forms(CommandLine c, Map<CommandSpec, List<String>> all) {
        CommandSpec spec = c.getCommandSpec();
        String path = spec.qualifiedName(" ").substring(spec.root().name().length() + 1);
        List<String> forms = new ArrayList<>();
        if (!c.getSubcommands().isEmpty()) {
            for (CommandLine sub : c.getSubcommands().values()) {
                forms.addAll(forms(sub, all));
            }
        } else if (spec.usageMessage().customSynopsis().length > 0) {
            for (String form : spec.usageMessage().customSynopsis()) {
                forms.add(path + " " + form);
            }
        } else {
            StringBuilder form = new StringBuilder(path);
            for (PositionalParamSpec p : spec.positionalParameters()) {
                String label = p.paramLabel() + (p.arity().max() > 1 ? "..." : "");
                form.append(' ').append(p.arity().min() == 0 ? "[" + label + "]" : label);
            }
            forms.add(form.toString());
        }
        all.put(spec, forms);
        return forms;
    }

    /** The commands of {@code c}: each one's forms, the last with its description beside it. */
    private static String commandList(CommandLine c, Map<CommandSpec, List<String>> forms) {
        CommandLine.Help.TextTable table = CommandLine.Help.TextTable.forColumns(
                CommandLine.Help.defaultColorScheme(CommandLine.Help.Ansi.OFF),
                new CommandLine.Help.Column(COMMAND_COLUMN, 2, CommandLine.Help.Column.Overflow.SPAN),
                new CommandLine.Help.Column(USAGE_WIDTH - COMMAND_COLUMN, 1, CommandLine.Help.Column.Overflow.WRAP));
        addCommands(table, c, forms);
        return table.toString();
    }

    private static void addCommands(
            CommandLine.Help.TextTable table, CommandLine c, Map<CommandSpec, List<String>> forms) {
        for (CommandLine sub : c.getSubcommands().values()) {
            if (!sub.getSubcommands().isEmpty()) {
                addCommands(table, sub, forms);
                continue;
            }
            List<String> own = forms.get(sub.getCommandSpec());
            for (int i = 0; i < own.size(); i++) {
                table.addRowValues(
                        own.get(i),
                        i < own.size() - 1
                                ? ""
                                : String.join(
                                        " ", sub.getCommandSpec().usageMessage().description()));
            }
        }
    }

    /**
     * The message of a usage error: the option's own message when one of the setters above refused a value, a
     * command the program does not have, else the parser's.
     */
    static String usageError(CommandLine.ParameterException e) {
        for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
            if (t instanceof IllegalArgumentException && t.getMessage() != null) {
                return t.getMessage();
            }
        }
        if (e instanceof CommandLine.UnmatchedArgumentException u
                && e.getCommandLine().getParent() == null
                && !u.getUnmatched().isEmpty()
                && !u.getUnmatched().get(0).startsWith("-")) {
            String word = u.getUnmatched().get(0);
            return e.getCommandLine().getSubcommands().containsKey(word)
                    ? "the command goes before --, after which every word is an argument of the command (see --help)"
                    : "unknown command '" + word + "' (see --help)";
        }
        return e.getMessage() + " (see --help)";
    }
}
