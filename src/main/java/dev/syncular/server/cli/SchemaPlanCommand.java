package dev.syncular.server.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.syncular.server.wire.Json;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code schema plan}: the plan of a schema change against a running deployment, {@code POST <mount>/admin/schema/plan}
 * with the admin token ({@code --token}) and the new document ({@code --schema <file>}); nothing is changed. Prints the
 * plan (docs/SCHEMA.md "Rolling out a schema change") and exits with 0 when the change is allowed, with
 * {@value SyncularCli#SERVER_REFUSED} when it is not (the refusal on stderr) or the server answered an HTTP error.
 */
@Command(name = "plan", description = "the plan of a schema change (--schema <new document>, admin --token)")
final class SchemaPlanCommand extends SyncularCli.Step {
    @Option(
            names = "--days",
            paramLabel = "<n>",
            description = "count the client records seen in the last <n> days (default 30)")
    Integer days;

    @Option(
            names = "--checkpoint",
            paramLabel = "<partition>:<name>",
            description = "a backfill checkpoint the new build declares (repeatable)")
    List<String> checkpoints = new ArrayList<>();

    private boolean allowed = true;

    /** {@code schema}: the commands about the served schema. */
    @Command(
            name = "schema",
            description = "the served schema",
            subcommands = {SchemaPlanCommand.class})
    static final class SchemaCommand {}

    @Override
    void run(SyncularCli cli, CliOptions o, PrintStream out) throws IOException {
        if (o.schema == null) {
            throw new IllegalArgumentException("give the new schema document: --schema <file>");
        }
        byte[] document = Files.readAllBytes(o.schema);
        List<String> query = new ArrayList<>();
        if (days != null) {
            query.add("days=" + days);
        }
        for (String c : checkpoints) {
            query.add("checkpoint=" + URLEncoder.encode(c, StandardCharsets.UTF_8));
        }
        String path = "/admin/schema/plan" + (query.isEmpty() ? "" : "?" + String.join("&", query));
        byte[] body = cli.connection()
                .exchange("POST", path, Map.of("Content-Type", "application/json"), document)
                .ok();
        JsonNode plan = Json.readTree(body);
        out.println(SyncularCli.pretty(new String(body, StandardCharsets.UTF_8)));
        allowed = plan.path("allowed").asBoolean(false);
        if (!allowed) {
            JsonNode refusal = plan.path("refusal");
            cli.err.println("syncular: the change is not allowed: "
                    + refusal.path("code").asText() + ": "
                    + refusal.path("message").asText());
        }
    }

    @Override
    int exit() {
        return allowed ? 0 : SyncularCli.SERVER_REFUSED;
    }
}
