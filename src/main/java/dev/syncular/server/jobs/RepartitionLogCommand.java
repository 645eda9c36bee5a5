package dev.syncular.server.jobs;

import dev.syncular.server.storage.LogRepartitioning;
import dev.syncular.server.storage.ServerStorage;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import org.jboss.logging.Logger;

/**
 * The one-shot {@code repartition-log} command ({@code ServerMain}): moves a plain commit log to hash partitions by
 * partition id while the deployment keeps serving (docs/SCALING.md, "Partitioning the commit log"). Safe to run
 * again: an interrupted move resumes from its stored cursors, a partitioned log is left as it is.
 *
 * <pre>
 * repartition-log [--partitions 16] [--batch-rows 5000]
 * </pre>
 *
 * <p>Exit status: {@value #EXIT_OK} the log is partitioned (also when it already was), {@value #EXIT_FAILED} the
 * move stopped (run it again), {@value #EXIT_USAGE} bad arguments.
 */
@ApplicationScoped
public class RepartitionLogCommand {
    public static final String NAME = "repartition-log";
    public static final int EXIT_OK = 0;
    public static final int EXIT_FAILED = 1;
    public static final int EXIT_USAGE = 2;
    static final String USAGE = "usage: repartition-log [--partitions <1..256, default 16>]"
            + " [--batch-rows <rows a transaction, default 5000>]";
    private static final Logger LOG = Logger.getLogger(RepartitionLogCommand.class);
    /** The whole move (a 10 M-commit log copies in minutes). */
    private static final Duration TIMEOUT = Duration.ofHours(24);
    /** Progress is logged every this many batches. */
    private static final int LOG_EVERY = 100;

    private final ServerStorage storage;

    @Inject
    public RepartitionLogCommand(ServerStorage storage) {
        this.storage = storage;
    }

    /** The command's options. */
    record Options(int partitions, int batchRows) {
        static Options parse(List<String> args) {
            int partitions = 16;
            int batchRows = 5000;
            for (int i = 0; i < args.size(); i += 2) {
                String option = args.get(i);
                if (i + 1 == args.size()) {
                    throw new IllegalArgumentException(option + " needs a value");
                }
                int value;
                try {
                    value = Integer.parseInt(args.get(i + 1));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(option + " takes an integer");
                }
                switch (option) {
                    case "--partitions" -> partitions = value;
                    case "--batch-rows" -> batchRows = value;
                    default -> throw new IllegalArgumentException("unknown option " + option);
                }
            }
            if (partitions < 1 || partitions > 256 || batchRows < 1) {
                throw new IllegalArgumentException("--partitions takes 1..256, --batch-rows a positive integer");
            }
            return new Options(partitions, batchRows);
        }
    }

    /** Runs the command with its arguments (after the command name); returns the exit status. */
    public int run(List<String> args) {
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            LOG.errorf("%s: %s%n%s", NAME, e.getMessage(), USAGE);
            return EXIT_USAGE;
        }
        long started = System.nanoTime();
        int[] batches = {0};
        try {
            LogRepartitioning.Report r = storage.logRepartitioning()
                    .repartition(o.partitions(), o.batchRows(), message -> {
                        if (!message.contains("rows copied") || ++batches[0] % LOG_EVERY == 1) {
                            LOG.infof("%s: %s", NAME, message);
                        }
                    })
                    .await()
                    .atMost(TIMEOUT);
            LOG.infof(
                    "%s: done in %d s: %d -> %d partitions per log table, %d rows copied",
                    NAME,
                    (System.nanoTime() - started) / 1_000_000_000L,
                    r.leavesBefore(),
                    r.leavesAfter(),
                    r.rowsCopied());
            return EXIT_OK;
        } catch (RuntimeException e) {
            LOG.errorf(e, "%s stopped; run it again to resume", NAME);
            return EXIT_FAILED;
        }
    }
}
