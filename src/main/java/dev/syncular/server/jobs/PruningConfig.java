package dev.syncular.server.jobs;

import dev.syncular.server.config.DurationRange;
import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;

/** §4.6 scheduled pruning of the commit log ({@code syncular.pruning.*}). */
@ConfigMapping(prefix = "syncular.pruning")
public interface PruningConfig {
    @WithDefault("true")
    boolean enabled();

    /**
     * Time between pruning passes (the scheduler's {@code every} and first delay, so more than {@code 0s}, no
     * {@code off}: {@code enabled=false} turns pruning off).
     */
    @WithDefault("1h")
    @DurationRange(min = DurationRange.MORE_THAN_ZERO, message = "must be more than 0s")
    Duration interval();

    /** Clients whose cursor record moved within this window hold the horizon back. */
    @WithDefault("14d")
    Duration activeWindow();

    /** The newest commits always retained. */
    @WithDefault("1000")
    int keepNewestCommits();

    /**
     * Push results (§2.3 idempotency records) older than this are deleted. A client that replays a commit
     * after its result was deleted gets it applied as a new commit (§2.3 allows pruning); a client that
     * received the result never replays it (§7.2.1 journals it with the outbox removal).
     */
    @WithDefault("30d")
    Duration pushResultRetention();

    /** Commit sequences deleted per pruning transaction (each its own short transaction). */
    @WithDefault("2000")
    int batchCommits();

    /** Push results deleted per pruning statement. */
    @WithDefault("1000")
    int batchPushResults();
}
