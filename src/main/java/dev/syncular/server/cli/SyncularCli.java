package dev.syncular.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.syncular.server.schema.CompiledSchema;
import dev.syncular.server.schema.SchemaException;
import dev.syncular.server.schema.SchemaLoader;
import dev.syncular.server.schema.TableSchema;
import dev.syncular.server.wire.CanonicalJson;
import dev.syncular.server.wire.DebugJson;
import dev.syncular.server.wire.Json;
import dev.syncular.server.wire.MessageDecoder;
import dev.syncular.server.wire.PushCommit;
import dev.syncular.server.wire.RowsSegment;
import dev.syncular.server.wire.WireException;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code syncular}, the command-line SSP2 client: {@code java -jar target/syncular-cli.jar [options] <command>}.
 * Each command is a picocli subcommand (a nested class below); the options ({@link CliOptions}, which also lays out
 * the usage texts) are inherited by all of them. Prints what the server sends (§11.1 debug JSON on
 * stdout; diagnostics on stderr) and exits with 0, with {@value #SERVER_REFUSED} when the server answered an HTTP
 * error (its body, the §10.1 JSON, on stdout), or with {@value #LOCAL_ERROR} on a usage, input or local error.
 */
@Command(
        name = "syncular",
        synopsisHeading = "",
        customSynopsis = "Usage: " + CliOptions.INVOCATION + "<command> [arguments]",
        subcommands = {
            SyncularCli.SubscribeCommand.class,
            SyncularCli.UnsubscribeCommand.class,
            SyncularCli.PushCommand.class,
            SyncularCli.PullCommand.class,
            SyncularCli.BootstrapCommand.class,
            SyncularCli.WatchCommand.class,
            SyncularCli.QueryCommand.class,
            SyncularCli.CommandCommand.class,
            SyncularCli.SegmentCommand.class,
            SyncularCli.BlobCommand.class,
            SchemaPlanCommand.SchemaCommand.class,
            SyncularCli.RenderCommand.class,
            SyncularCli.StateCommand.class,
            SyncularCli.HelpCommand.class
        })
public final class SyncularCli implements Callable<Integer> {
    public static final int SERVER_REFUSED = 1;
    public static final int LOCAL_ERROR = 2;

    @Mixin
    CliOptions options = new CliOptions();

    @Spec
    CommandSpec spec;

    private final PrintStream out;
    final PrintStream err;

    SyncularCli(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs one command; returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        SyncularCli cli = new SyncularCli(out, err);
        CommandLine line = commandLine(cli);
        line.setParameterExceptionHandler((e, given) -> {
            err.println("syncular: " + CliOptions.usageError(e));
            return LOCAL_ERROR;
        });
        line.setExecutionExceptionHandler((e, command, parsed) -> cli.failed(e));
        line.setExecutionStrategy(parsed -> {
            for (CommandLine c : parsed.asCommandLineList()) {
                if (c.isUsageHelpRequested()) {
                    out.print(c.getUsageMessage());
                    return 0;
                }
            }
            return new CommandLine.RunLast().execute(parsed);
        });
        return line.execute(args);
    }

    /** The command line of {@code cli}: its commands, their inherited options and their usage texts. */
    static CommandLine commandLine(SyncularCli cli) {
        return CliOptions.lay(new CommandLine(cli).setExpandAtFiles(false).setOverwrittenOptionsAllowed(true));
    }

    /** No command: the usage, on stderr. */
    @Override
    public Integer call() {
        err.print(spec.commandLine().getUsageMessage());
        return LOCAL_ERROR;
    }

    /** The exit status of a command that threw {@code e}, with its diagnostics printed. */
    private int failed(Exception e) throws Exception {
        if (e instanceof HttpFailure f) {
            out.println(pretty(f.body));
            err.println(
                    f.status == 200
                            ? "syncular: the operation failed (REMOTE.md §7 error on stdout)"
                            : "syncular: the server answered HTTP " + f.status);
            return SERVER_REFUSED;
        }
        if (e instanceof IllegalArgumentException
                || e instanceof IllegalStateException
                || e instanceof UncheckedIOException
                || e instanceof SchemaException
                || e instanceof WireException) {
            err.println("syncular: " + e.getMessage());
            return LOCAL_ERROR;
        }
        if (e instanceof IOException) {
            err.println("syncular: " + e);
            return LOCAL_ERROR;
        }
        throw e;
    }

    /** A command of the line: runs with the options and streams of the {@link SyncularCli} at its root. */
    @Command
    abstract static class Step implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Override
        public Integer call() throws IOException {
            SyncularCli cli = (SyncularCli) spec.root().userObject();
            run(cli, cli.options, cli.out);
            return exit();
        }

        /** The exit status once {@link #run} returned: 0 unless the command says otherwise. */
        int exit() {
            return 0;
        }

        abstract void run(SyncularCli cli, CliOptions o, PrintStream out) throws IOException;
    }

    @Command(name = "subscribe", description = "add (or replace) a subscription in the state file")
    static final class SubscribeCommand extends Step {
        @Parameters(index = "0", paramLabel = "<id>", description = "the subscription's id")
        String id;

        @Parameters(index = "1", paramLabel = "<table>", description = "the table it syncs")
        String table;

        @Parameters(
                index = "2..*",
                arity = "0..*",
                paramLabel = "<variable>=<value>[,<value>...]",
                description = "its scopes (§3.1)")
        List<String> scopes = new ArrayList<>();

        @Override
        void run(SyncularCli cli, CliOptions o, PrintStream out) {
            ClientState state = StateFile.load(o.state, o.clientId);
            Map<String, List<String>> values = new LinkedHashMap<>();
            for (String s : scopes) {
                int eq = s.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("a scope is <variable>=<value>[,<value>...], not '" + s + "'");
                }
                values.put(s.substring(0, eq), Arrays.asList(s.substring(eq + 1).split(",")));
            }
            state.subscriptions.put(id, new Subscription(id, table, values));
            StateFile.save(o.state, state);
            out.println(DebugJson.toText(StateFile.render(state)));
        }
    }

    @Command(name = "unsubscribe", description = "remove a subscription from the state file")
    static final class UnsubscribeCommand extends Step {
        @Parameters(paramLabel = "<id>", description = "the subscription's id")
        String id;

        @Override
        void run(SyncularCli cli, CliOptions o, PrintStream out) {
            ClientState state = StateFile.load(o.state, o.clientId);
            if (state.subscriptions.remove(id) == null) {
                throw new IllegalArgumentException("no subscription '" + id + "' in the state file");
            }
            StateFile.save(o.state, state);
            out.println(DebugJson.toText(StateFile.render(state)));
        }
    }

    @Command(
            name = "push",
            customSynopsis = {"<table> <rows>", "<rows>"},
            description = "push rows in one commit, with a pull of every subscription; <rows> is JSON text, @file or -"
                    + " (stdin): an object or an array of them. {\"col\":value,...} upserts those columns (the primary"
                    + " key among them; a new row needs every column, null for none), \"$baseVersion\":n makes it"
                    + " conditional, {\"$delete\":<key>} deletes. Without <table>, one commit over several tables:"
                    + " every row names its table, \"$table\":\"notes\" (with <table>, \"$table\" overrides it for"
                    + " that row)")
    static final class PushCommand extends Step {
        @Parameters(
                index = "0",
                paramLabel = "<table>",
                description = "the table of the rows; left out, every row names its own (\"$table\")")
        String first;

        @Parameters(
                index = "1",
                arity = "0..1",
                paramLabel = "<rows>",
                description = "the rows: JSON text, @file or - (stdin)")
        String second;

        @Override
        void run(SyncularCli cli, CliOptions o, PrintStream out) throws IOException {
            CompiledSchema schema = cli.schema();
            // push <table> <rows>, or push <rows> where every row names its "$table" (one commit, several tables)
            boolean tableNamed = second != null;
            TableSchema table = tableNamed ? schema.table(first) : null;
            if (tableNamed && table == null) {
                throw new IllegalArgumentException(
                        "the schema has no table '" + first + "'; it has " + schema.tableNames());
            }
            JsonNode rows = Json.readTree(input(tableNamed ? second : first));
            ClientState state = StateFile.load(o.state, o.clientId);
            PushCommit commit = new PushCommit(state.nextCommitId(), RowValues.operations(schema, table, rows));
            cli.rounds(schema, state).push(commit);
        }
    }

    /** The commands over named subscriptions of the state file, all of them when none is named. */
    @Command
    abstract static class SubscriptionsStep extends Step {
        @Parameters(arity = "0..*", paramLabel = "<id>", description = "a subscription of the state file")
        List<String> ids = new ArrayList<>();

        @Override
        final void run(SyncularCli cli, CliOptions o, PrintStream out) throws IOException {
            CompiledSchema schema = cli.schema();
            ClientState state = StateFile.load(o.state, o.clientId);
            run(cli.rounds(schema, state), state, SyncRounds.named(state, ids), o, out);
        }

        abstract void run(SyncRounds rounds, ClientState state, List<Subscription> subs, CliOptions o, PrintStream out)
                throws IOException;
    }

    @Command(name = "pull", description = "one round pulling the subscriptions (all when none is named)")
    static final class PullCommand extends SubscriptionsStep {
        @Override
        void run(SyncRounds rounds, ClientState state, List<Subscription> subs, CliOptions o, PrintStream out) {
            rounds.pull(subs);
        }
    }

    @Command(
            name = "bootstrap",
            description = "start the subscriptions over and round until their bootstrap is complete")
    static final class BootstrapCommand extends SubscriptionsStep {
        @Override
        void run(SyncRounds rounds, ClientState state, List<Subscription> subs, CliOptions o, PrintStream out) {
            rounds.bootstrap(subs);
        }
    }

    @Command(
            name = "watch",
            description = "one pull, then the realtime socket (§8): prints every control message and every delta as"
                    + " it arrives (with --decode, the changed rows), applies and acknowledges deltas, pulls on a"
                    + " wake-up; ends when the socket closes or after --count <n> deltas")
    static final class WatchCommand extends SubscriptionsStep {
        @Override
        void run(SyncRounds rounds, ClientState state, List<Subscription> subs, CliOptions o, PrintStream out)
                throws IOException {
            new Watch(o, rounds, state, out).run(subs);
        }
    }

    @Command(
            name = "query",
            description = "run a registered query (POST <mount>/operations, REMOTE.md); <params> is JSON text, @file"
                    + " or - ({\"$integer\":\"n\"} and {\"$bytes\":\"<base64>\"} for those types); prints the rows"
                    + " and maxCommitSeq")
    static final class QueryCommand extends Step {
        @Parameters(index = "0", paramLabel = "<operationId>", description = "the registered query")
        String operationId;

        @Parameters(index = "1", arity = "0..1", paramLabel = "<params>", description = "its params (default {})")
        String params = "{}";

        @Override
        void run(SyncularCli cli, CliOptions o, PrintStream out) throws IOException {
            cli.operation(operationId, null, params);
        }
    }

    @Command(name = "command", description = "run a registered command; prints its status, commitSeq and results")
    static final class CommandCommand extends Step {
        @Parameters(index = "0", paramLabel = "<operationId>", description = "the registered command")
        String operationId;

        @Parameters(index = "1", paramLabel = "<requestId>", description = "the request's idempotency id")
        String requestId;

        @Parameters(index = "2", arity = "0..1", paramLabel = "<params>", description = "its params (default {})")
        String params = "{}";

        @Override
        void run(SyncularCli cli, CliOptions o, PrintStream out) throws IOException {
            cli.operation(operationId, requestId, params);
        }
    }

    @Command(
            name = "segment",
            description = "download a segment (GET <mount>/segments/{id}) with --sub or --scopes; prints it (a rows"
                    + " segment) or writes it to --out")
    static final class SegmentCommand extends Step {
        @Parameters(paramLabel = "<segmentId>", description = "the segment's content address, sha256:<hex>")
        String id;

        @Override
        void run(SyncularCli cli, CliOptions o, PrintStream out) throws IOException {
            Map<String, List<String>> scopes;
            if (o.sub != null) {
                Subscription s = SyncRounds.named(StateFile.load(o.state, o.clientId), List.of(o.sub))
                        .get(0);
                scopes = s.scopes;
            } else if (o.scopes != null) {
                scopes = new LinkedHashMap<>();
                for (Map.Entry<String, JsonNode> e : Json.readTree(o.scopes).properties()) {
                    List<String> values = new ArrayList<>();
                    e.getValue().forEach(v -> values.add(v.asText()));
                    scopes.put(e.getKey(), values);
                }
            } else {
                throw new IllegalArgumentException(
                        "a segment is re-authorized against scopes (§5.5): give --sub <id>" + " or --scopes <json>");
            }
            byte[] bytes = cli.connection().segment(id, CanonicalJson.write(CanonicalJson.canonicalScopes(scopes)));
            String address = "sha256:" + CanonicalJson.sha256Hex(bytes);
            if (!address.equals(id)) {
                throw new IllegalStateException("the bytes do not match the segment id (they hash to " + address + ")");
            }
            if (o.out != null) {
                Files.write(o.out, bytes);
                cli.err.println("segment " + id + ": " + bytes.length + " bytes written to " + o.out);
            } else if (bytes.length >= 4 && Arrays.equals(Arrays.copyOf(bytes, 4), RowsSegment.MAGIC)) {
                out.println(DebugJson.toText(DebugJson.render(RowsSegment.decode(bytes))));
            } else {
                throw new IllegalArgumentException(
                        "segment " + id + " is not a rows segment (a SQLite image?): save it" + " with --out <file>");
            }
        }
    }

    @Command(
            name = "blob",
            description = "upload or download a blob (§5.9)",
            subcommands = {BlobPutCommand.class, BlobGetCommand.class})
    static final class BlobCommand {}

    @Command(name = "put", description = "upload a blob (PUT <mount>/blobs/{id}) and print its BlobRef")
    static final class BlobPutCommand extends Step {
        @Parameters(paramLabel = "<file>", description = "the blob's bytes")
        Path file;

        @Override
        void run(SyncularCli cli, CliOptions o, PrintStream out) throws IOException {
            byte[] bytes = Files.readAllBytes(file);
            String blobId = "sha256:" + CanonicalJson.sha256Hex(bytes);
            cli.connection()
                    .exchange(
                            "PUT",
                            "/blobs/" + blobId,
                            Map.of("Content-Type", o.mediaType != null ? o.mediaType : "application/octet-stream"),
                            bytes)
                    .ok();
            ObjectNode ref = Json.object();
            ref.put("blobId", blobId);
            ref.put("byteLength", bytes.length);
            if (o.mediaType != null) {
                ref.put("mediaType", o.mediaType);
            }
            out.println(ref);
        }
    }

    @Command(name = "get", description = "download a blob to --out (else stdout)")
    static final class BlobGetCommand extends Step {
        @Parameters(paramLabel = "<blobId>", description = "the blob's content address, sha256:<hex>")
        String blobId;

        @Override
        void run(SyncularCli cli, CliOptions o, PrintStream out) throws IOException {
            ServerConnection server = cli.connection();
            ServerConnection.Answer answer = server.exchange("GET", "/blobs/" + blobId, Map.of(), null);
            byte[] bytes = answer.ok();
            if (answer.headers().firstValue("ETag").isEmpty()) {
                // The S3 store answers with a presigned URL instead of the bytes (§5.9.5).
                bytes = server.fetch(Json.readTree(bytes).path("url").asText());
            }
            if (o.out != null) {
                Files.write(o.out, bytes);
                cli.err.println("blob " + blobId + ": " + bytes.length + " bytes written to " + o.out);
            } else {
                out.write(bytes);
                out.flush();
            }
        }
    }

    @Command(name = "render", description = "print a saved SSP2 message or SSG2 rows segment as debug JSON")
    static final class RenderCommand extends Step {
        @Parameters(paramLabel = "<file>", description = "the saved bytes")
        Path file;

        @Override
        void run(SyncularCli cli, CliOptions o, PrintStream out) throws IOException {
            byte[] bytes = Files.readAllBytes(file);
            boolean segment = bytes.length >= 4 && Arrays.equals(Arrays.copyOf(bytes, 4), RowsSegment.MAGIC);
            out.println(DebugJson.toText(
                    segment
                            ? DebugJson.render(RowsSegment.decode(bytes))
                            : DebugJson.render(MessageDecoder.decode(bytes))));
        }
    }

    @Command(name = "state", description = "print the state file")
    static final class StateCommand extends Step {
        @Override
        void run(SyncularCli cli, CliOptions o, PrintStream out) {
            out.println(DebugJson.toText(StateFile.render(StateFile.load(o.state, o.clientId))));
        }
    }

    @Command(name = "help", description = "print this text, or a command's (also -h, --help)")
    static final class HelpCommand extends Step {
        @Parameters(arity = "0..1", paramLabel = "<command>", description = "the command")
        String command;

        @Override
        void run(SyncularCli cli, CliOptions o, PrintStream out) {
            CommandLine line = spec.root().commandLine();
            if (command != null) {
                line = line.getSubcommands().get(command);
                if (line == null) {
                    throw new IllegalArgumentException("unknown command '" + command + "' (see --help)");
                }
            }
            out.print(line.getUsageMessage());
        }
    }

    private SyncRounds rounds(CompiledSchema schema, ClientState state) {
        return new SyncRounds(options, schema, state, connection(), out, err);
    }

    ServerConnection connection() {
        return new ServerConnection(options.url, options.headers, options.verbose ? err::println : null);
    }

    private CompiledSchema schema() {
        if (options.schema == null) {
            throw new IllegalArgumentException("give the schema IR the server serves: --schema <file>");
        }
        // §5.10.1: a crdtType no merger claims is refused at compile time; the server's own mergers are named here
        Set<String> crdtTypes = new HashSet<>(SchemaLoader.BUILTIN_CRDT_TYPES);
        crdtTypes.addAll(options.crdtTypes);
        try {
            return SchemaLoader.load(options.schema, crdtTypes);
        } catch (SchemaException e) {
            if ("crdt_type_unknown".equals(e.reason())) {
                throw new IllegalArgumentException(
                        e.getMessage() + "; name the server's own crdt types with --crdt-types");
            }
            throw e;
        }
    }

    /** JSON text, {@code @file} or {@code -} (stdin). */
    private static String input(String arg) throws IOException {
        if (arg.equals("-")) {
            return new String(System.in.readAllBytes(), StandardCharsets.UTF_8);
        }
        return arg.startsWith("@") ? Files.readString(Path.of(arg.substring(1))) : arg;
    }

    /**
     * {@code query <operationId> [<params>]} and {@code command <operationId> <requestId> [<params>]} (REMOTE.md §5):
     * the state file's client id, the params as JSON text, @file or -; prints the answer as plain JSON. An
     * operation error ({@code kind: "error"}) is printed too and exits with {@value #SERVER_REFUSED}.
     */
    private void operation(String operationId, String requestId, String params) throws IOException {
        ClientState state = StateFile.load(options.state, options.clientId);
        StateFile.save(options.state, state);
        byte[] body = RemoteOperationCall.request(state.clientId, operationId, requestId, Json.readTree(input(params)));
        ServerConnection.Answer answer = connection()
                .exchange("POST", "/operations", Map.of("Content-Type", RemoteOperationCall.CONTENT_TYPE), body);
        JsonNode decoded = RemoteOperationCall.decode(Json.readTree(answer.ok()));
        if ("error".equals(decoded.path("kind").asText())) {
            throw new HttpFailure(200, decoded.toString()); // printed by failed(), exit status 1
        }
        out.println(Json.prettyWriter().writeValueAsString(decoded));
    }

    static String pretty(String body) {
        try {
            return DebugJson.toText(Json.readTree(body));
        } catch (IOException e) {
            return body;
        }
    }
}
