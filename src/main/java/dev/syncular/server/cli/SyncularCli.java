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

/**
 * {@code syncular}, the command-line SSP2 client: {@code java -jar target/syncular-cli.jar [options] <command>}.
 * Prints what the server sends (§11.1 debug JSON on stdout; diagnostics on stderr) and exits with 0, with
 * {@value #SERVER_REFUSED} when the server answered an HTTP error (its body, the §10.1 JSON, on stdout), or with
 * {@value #LOCAL_ERROR} on a usage, input or local error.
 */
public final class SyncularCli {
    public static final int SERVER_REFUSED = 1;
    public static final int LOCAL_ERROR = 2;

    private SyncularCli() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs one command; returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        try {
            CliOptions options = CliOptions.parse(args);
            if (options.words.isEmpty()) {
                err.print(CliOptions.usage());
                return LOCAL_ERROR;
            }
            if (options.words.get(0).equals("help")) {
                out.print(CliOptions.usage());
                return 0;
            }
            command(options, out, err);
            return 0;
        } catch (HttpFailure e) {
            out.println(pretty(e.body));
            err.println(
                    e.status == 200
                            ? "syncular: the operation failed (REMOTE.md §7 error on stdout)"
                            : "syncular: the server answered HTTP " + e.status);
            return SERVER_REFUSED;
        } catch (IllegalArgumentException
                | IllegalStateException
                | UncheckedIOException
                | SchemaException
                | WireException e) {
            err.println("syncular: " + e.getMessage());
            return LOCAL_ERROR;
        } catch (IOException e) {
            err.println("syncular: " + e);
            return LOCAL_ERROR;
        }
    }

    private static void command(CliOptions o, PrintStream out, PrintStream err) throws IOException {
        String command = o.words.get(0);
        List<String> rest = o.words.subList(1, o.words.size());
        switch (command) {
            case "subscribe" -> {
                ClientState state = StateFile.load(o.state, o.clientId);
                String id = o.word(1, "subscription id");
                Map<String, List<String>> scopes = new LinkedHashMap<>();
                for (String s : rest.subList(Math.min(2, rest.size()), rest.size())) {
                    int eq = s.indexOf('=');
                    if (eq <= 0) {
                        throw new IllegalArgumentException(
                                "a scope is <variable>=<value>[,<value>...], not '" + s + "'");
                    }
                    scopes.put(
                            s.substring(0, eq),
                            Arrays.asList(s.substring(eq + 1).split(",")));
                }
                state.subscriptions.put(id, new Subscription(id, o.word(2, "table"), scopes));
                StateFile.save(o.state, state);
                out.println(DebugJson.toText(StateFile.render(state)));
            }
            case "unsubscribe" -> {
                ClientState state = StateFile.load(o.state, o.clientId);
                if (state.subscriptions.remove(o.word(1, "subscription id")) == null) {
                    throw new IllegalArgumentException("no subscription '" + o.word(1, "") + "' in the state file");
                }
                StateFile.save(o.state, state);
                out.println(DebugJson.toText(StateFile.render(state)));
            }
            case "state" -> out.println(DebugJson.toText(StateFile.render(StateFile.load(o.state, o.clientId))));
            case "push" -> {
                CompiledSchema schema = schema(o);
                // push <table> <rows>, or push <rows> where every row names its "$table" (one commit, several tables)
                boolean tableNamed = rest.size() >= 2;
                TableSchema table = tableNamed ? schema.table(o.word(1, "table")) : null;
                if (tableNamed && table == null) {
                    throw new IllegalArgumentException(
                            "the schema has no table '" + o.word(1, "") + "'; it has " + schema.tableNames());
                }
                JsonNode rows = Json.readTree(input(o.word(tableNamed ? 2 : 1, "rows (JSON, @file or -)")));
                ClientState state = StateFile.load(o.state, o.clientId);
                PushCommit commit = new PushCommit(state.nextCommitId(), RowValues.operations(schema, table, rows));
                rounds(o, schema, state, out, err).push(commit);
            }
            case "pull" -> {
                CompiledSchema schema = schema(o);
                ClientState state = StateFile.load(o.state, o.clientId);
                rounds(o, schema, state, out, err).pull(SyncRounds.named(state, rest));
            }
            case "bootstrap" -> {
                CompiledSchema schema = schema(o);
                ClientState state = StateFile.load(o.state, o.clientId);
                rounds(o, schema, state, out, err).bootstrap(SyncRounds.named(state, rest));
            }
            case "watch" -> {
                CompiledSchema schema = schema(o);
                ClientState state = StateFile.load(o.state, o.clientId);
                new Watch(o, rounds(o, schema, state, out, err), state, out).run(SyncRounds.named(state, rest));
            }
            case "query" ->
                operation(o, o.word(1, "operation id"), null, rest.size() >= 2 ? rest.get(1) : "{}", out, err);
            case "command" ->
                operation(
                        o,
                        o.word(1, "operation id"),
                        o.word(2, "request id"),
                        rest.size() >= 3 ? rest.get(2) : "{}",
                        out,
                        err);
            case "segment" -> segment(o, out, err);
            case "blob" -> blob(o, out, err);
            case "render" -> {
                byte[] bytes = Files.readAllBytes(Path.of(o.word(1, "file")));
                boolean segment = bytes.length >= 4 && Arrays.equals(Arrays.copyOf(bytes, 4), RowsSegment.MAGIC);
                out.println(DebugJson.toText(
                        segment
                                ? DebugJson.render(RowsSegment.decode(bytes))
                                : DebugJson.render(MessageDecoder.decode(bytes))));
            }
            default -> throw new IllegalArgumentException("unknown command '" + command + "' (see --help)");
        }
    }

    private static SyncRounds rounds(
            CliOptions o, CompiledSchema schema, ClientState state, PrintStream out, PrintStream err) {
        return new SyncRounds(o, schema, state, connection(o, err), out, err);
    }

    private static ServerConnection connection(CliOptions o, PrintStream err) {
        return new ServerConnection(o.url, o.headers, o.verbose ? err::println : null);
    }

    private static CompiledSchema schema(CliOptions o) {
        if (o.schema == null) {
            throw new IllegalArgumentException("give the schema IR the server serves: --schema <file>");
        }
        // §5.10.1: a crdtType no merger claims is refused at compile time; the server's own mergers are named here
        Set<String> crdtTypes = new HashSet<>(SchemaLoader.BUILTIN_CRDT_TYPES);
        crdtTypes.addAll(o.crdtTypes);
        try {
            return SchemaLoader.load(o.schema, crdtTypes);
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
    private static void operation(
            CliOptions o, String operationId, String requestId, String params, PrintStream out, PrintStream err)
            throws IOException {
        ClientState state = StateFile.load(o.state, o.clientId);
        StateFile.save(o.state, state);
        byte[] body = RemoteOperationCall.request(state.clientId, operationId, requestId, Json.readTree(input(params)));
        ServerConnection.Answer answer = connection(o, err)
                .exchange("POST", "/operations", Map.of("Content-Type", RemoteOperationCall.CONTENT_TYPE), body);
        JsonNode decoded = RemoteOperationCall.decode(Json.readTree(answer.ok()));
        if ("error".equals(decoded.path("kind").asText())) {
            throw new HttpFailure(200, decoded.toString()); // printed by run(), exit status 1
        }
        out.println(Json.prettyWriter().writeValueAsString(decoded));
    }

    private static void segment(CliOptions o, PrintStream out, PrintStream err) throws IOException {
        String id = o.word(1, "segment id");
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
        byte[] bytes = connection(o, err).segment(id, CanonicalJson.write(CanonicalJson.canonicalScopes(scopes)));
        String address = "sha256:" + CanonicalJson.sha256Hex(bytes);
        if (!address.equals(id)) {
            throw new IllegalStateException("the bytes do not match the segment id (they hash to " + address + ")");
        }
        if (o.out != null) {
            Files.write(o.out, bytes);
            err.println("segment " + id + ": " + bytes.length + " bytes written to " + o.out);
        } else if (bytes.length >= 4 && Arrays.equals(Arrays.copyOf(bytes, 4), RowsSegment.MAGIC)) {
            out.println(DebugJson.toText(DebugJson.render(RowsSegment.decode(bytes))));
        } else {
            throw new IllegalArgumentException(
                    "segment " + id + " is not a rows segment (a SQLite image?): save it" + " with --out <file>");
        }
    }

    private static void blob(CliOptions o, PrintStream out, PrintStream err) throws IOException {
        ServerConnection server = connection(o, err);
        switch (o.word(1, "blob command (put or get)")) {
            case "put" -> {
                byte[] bytes = Files.readAllBytes(Path.of(o.word(2, "file")));
                String blobId = "sha256:" + CanonicalJson.sha256Hex(bytes);
                server.exchange(
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
            case "get" -> {
                ServerConnection.Answer answer =
                        server.exchange("GET", "/blobs/" + o.word(2, "blob id"), Map.of(), null);
                byte[] bytes = answer.ok();
                if (answer.headers().firstValue("ETag").isEmpty()) {
                    // The S3 store answers with a presigned URL instead of the bytes (§5.9.5).
                    bytes = server.fetch(Json.readTree(bytes).path("url").asText());
                }
                if (o.out != null) {
                    Files.write(o.out, bytes);
                    err.println("blob " + o.word(2, "") + ": " + bytes.length + " bytes written to " + o.out);
                } else {
                    out.write(bytes);
                    out.flush();
                }
            }
            default -> throw new IllegalArgumentException("blob takes put <file> or get <blobId>");
        }
    }

    private static String pretty(String body) {
        try {
            return DebugJson.toText(Json.readTree(body));
        } catch (IOException e) {
            return body;
        }
    }
}
