package dev.syncular.server.jobs;

import dev.syncular.server.schema.SchemaWindow;
import dev.syncular.server.storage.ActivationResult;
import dev.syncular.server.storage.CheckpointState;
import dev.syncular.server.storage.StoredCheckpoint;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jboss.logging.Logger;

/**
 * The one-shot {@code backfill} command ({@link ServerMain}): runs a declared checkpoint's backfill end to end
 * with the server's own image — declare (idempotent) and claim it, fill its table page by page with each page
 * and the watermark committed together ({@link Backfills#batch(String, String, long, java.util.function.Function)}),
 * then activate it; a {@code stale} or {@code unverifiable} activation catches up and tries again.
 *
 * <pre>
 * backfill --partition tenant-1 --checkpoint fill-priority --schema-version 2 --table notes \
 *          --set priority=0 [--set done=false] [--batch-size 500] [--attempts 5]
 * </pre>
 *
 * <p>Exit status: {@value #EXIT_OK} activated (also when it already was), {@value #EXIT_USAGE} bad arguments,
 * {@value #EXIT_NOT_ACTIVATED} still not activated after the attempts, {@value #EXIT_FAILED} any other
 * failure (a lost claim included: another worker owns the checkpoint now). Safe to rerun.
 */
@ApplicationScoped
public class BackfillCommand {
    public static final String NAME = "backfill";
    public static final int EXIT_OK = 0;
    public static final int EXIT_FAILED = 1;
    public static final int EXIT_USAGE = 2;
    public static final int EXIT_NOT_ACTIVATED = 3;
    static final String USAGE = "usage: backfill --partition <p> --checkpoint <name> --schema-version <n> --table <t>"
            + " --set <column>=<json> [--set ...] [--batch-size <rows, default 500>] [--attempts <default 5>]";
    private static final Logger LOG = Logger.getLogger(BackfillCommand.class);
    /** Per storage call (a page is one transaction). */
    private static final Duration STEP_TIMEOUT = Duration.ofMinutes(10);

    private final Backfills backfills;
    private final SchemaWindow window;

    @Inject
    public BackfillCommand(Backfills backfills, SchemaWindow window) {
        this.backfills = backfills;
        this.window = window;
    }

    /** The command's options, parsed from its arguments. */
    public record Options(
            String partition,
            String checkpoint,
            int schemaVersion,
            String table,
            Map<String, String> set,
            int batchSize,
            int attempts) {

        /** Parses {@code args}; a missing, unknown or malformed option is an {@link IllegalArgumentException}. */
        public static Options parse(List<String> args) {
            Map<String, String> single = new LinkedHashMap<>();
            Map<String, String> set = new LinkedHashMap<>();
            for (int i = 0; i < args.size(); i++) {
                String option = args.get(i);
                if (i + 1 == args.size()) {
                    throw new IllegalArgumentException(option + " needs a value");
                }
                String value = args.get(++i);
                switch (option) {
                    case "--partition", "--checkpoint", "--schema-version", "--table", "--batch-size", "--attempts" -> {
                        if (single.put(option, value) != null) {
                            throw new IllegalArgumentException(option + " given twice");
                        }
                    }
                    case "--set" -> {
                        int eq = value.indexOf('=');
                        if (eq <= 0 || set.put(value.substring(0, eq), value.substring(eq + 1)) != null) {
                            throw new IllegalArgumentException(
                                    "--set takes <column>=<json>, once per column: " + value);
                        }
                    }
                    default -> throw new IllegalArgumentException("unknown option " + option);
                }
            }
            return new Options(
                    required(single, "--partition"),
                    required(single, "--checkpoint"),
                    positive(single, "--schema-version", null),
                    required(single, "--table"),
                    Map.copyOf(set),
                    positive(single, "--batch-size", 500),
                    positive(single, "--attempts", 5));
        }

        private static String required(Map<String, String> options, String name) {
            String v = options.get(name);
            if (v == null || v.isBlank()) {
                throw new IllegalArgumentException(name + " is required");
            }
            return v;
        }

        private static int positive(Map<String, String> options, String name, Integer fallback) {
            String v = options.get(name);
            if (v == null && fallback != null) {
                return fallback;
            }
            try {
                int n = Integer.parseInt(required(options, name));
                if (n < 1) {
                    throw new NumberFormatException();
                }
                return n;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " takes a positive integer");
            }
        }
    }

    /** Runs the command with its arguments (after the command name); returns the exit status. */
    public int run(List<String> args) {
        Options o;
        ColumnFill fill;
        try {
            o = Options.parse(args);
            fill = ColumnFill.of(window.current().table(o.table()), o.table(), o.set());
        } catch (IllegalArgumentException e) {
            LOG.errorf("backfill: %s%n%s", e.getMessage(), USAGE);
            return EXIT_USAGE;
        }
        try {
            return execute(o, fill);
        } catch (RuntimeException e) {
            LOG.errorf(e, "backfill of checkpoint \"%s\" in partition \"%s\" failed", o.checkpoint(), o.partition());
            return EXIT_FAILED;
        }
    }

    private int execute(Options o, ColumnFill fill) {
        backfills
                .declare(o.partition(), o.checkpoint(), o.schemaVersion())
                .await()
                .atMost(STEP_TIMEOUT);
        StoredCheckpoint claimed = backfills
                .claim(o.partition(), o.checkpoint(), o.schemaVersion())
                .await()
                .atMost(STEP_TIMEOUT);
        if (claimed.state() == CheckpointState.ACTIVATED) {
            LOG.infof(
                    "backfill: checkpoint \"%s\" in partition \"%s\" is already activated",
                    o.checkpoint(), o.partition());
            return EXIT_OK;
        }
        long epoch = claimed.ownerEpoch();
        long[] observed = {claimed.observedRows()};
        LOG.infof(
                "backfill: claimed checkpoint \"%s\" in partition \"%s\" (owner epoch %d), filling %s %s",
                o.checkpoint(), o.partition(), epoch, fill.table(), o.set().keySet());
        int batchNo = 0;
        for (int attempt = 1; attempt <= o.attempts(); attempt++) {
            long watermark;
            int written;
            do {
                String commitId = "backfill:" + o.checkpoint() + ":" + epoch + ":" + (++batchNo);
                Backfills.Batch<Integer> b = backfills
                        .<Integer>batch(
                                o.partition(),
                                o.checkpoint(),
                                epoch,
                                tx -> fill.fillPage(tx, commitId, o.batchSize(), System.currentTimeMillis())
                                        .map(n -> new Backfills.Batch<>(
                                                n, tx.state().maxCommitSeq(), observed[0] + n)))
                        .await()
                        .atMost(STEP_TIMEOUT);
                observed[0] = b.observedRows();
                watermark = b.watermark();
                written = b.result();
            } while (written > 0);
            ActivationResult r = backfills
                    .activate(o.partition(), o.checkpoint(), epoch, watermark, List.of(fill.table()))
                    .await()
                    .atMost(STEP_TIMEOUT);
            if (r == ActivationResult.ACTIVATED) {
                LOG.infof(
                        "backfill: checkpoint \"%s\" in partition \"%s\" activated at watermark %d (%d rows filled)",
                        o.checkpoint(), o.partition(), watermark, observed[0]);
                return EXIT_OK;
            }
            LOG.warnf(
                    "backfill: activation %d of %d answered %s at watermark %d; catching up",
                    attempt, o.attempts(), r.name().toLowerCase(), watermark);
        }
        return EXIT_NOT_ACTIVATED;
    }
}
