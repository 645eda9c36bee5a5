package dev.syncular.server.testsupport;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * The PostgreSQL a fault campaign's pods run on ({@code faults.FaultCampaignIT}: one cluster of the test's own,
 * {@link ThrowawayPostgres}; {@code faults.FailoverCampaignIT}: a pg_auto_failover formation, {@link
 * AutoFailoverFormation}), and the database faults it can be put through. The campaign's {@link FaultSchedule} draws
 * only the kinds in {@link #faults()}; a fault's method of a database that does not list its kind fails.
 */
public interface CampaignDatabase extends AutoCloseable {
    /** The datasource URL the pods are given ({@code quarkus.datasource.reactive.url}: one URL, or a host list). */
    String url();

    String user();

    String password();

    /**
     * The hot standbys the pods read from ({@code syncular.storage.replicas}: reactive URLs, the datasource's
     * credentials); none by default.
     */
    default List<String> replicas() {
        return List.of();
    }

    /** A JDBC connection to the host that takes writes now (the invariants' queries, the LISTEN backends). */
    Connection connect() throws SQLException;

    /** The database faults ({@link FaultSchedule.Kind}) this database can be put through. */
    Set<FaultSchedule.Kind> faults();

    /**
     * {@link FaultSchedule.Kind#RESTART_PG}, {@link FaultSchedule.Kind#START_POD_WHILE_PG_DOWN}: the database
     * stopped, every session ended.
     */
    default void stop() throws IOException, InterruptedException {
        throw unsupported(FaultSchedule.Kind.RESTART_PG);
    }

    /** Brings back what {@link #stop()} or {@link #killPrimary(Callable)} took down; returns once it serves again. */
    void startAgain() throws IOException, InterruptedException;

    /**
     * {@link FaultSchedule.Kind#FAILOVER}: a planned failover by the HA manager. Calls {@code whenWritable} as soon as
     * the new primary takes a write (the campaign measures the pods' recovery from there), returns once the old
     * primary follows it as its standby; what happened in words (hosts, times, what {@code whenWritable} answered).
     */
    default String failover(Callable<String> whenWritable) throws Exception {
        throw unsupported(FaultSchedule.Kind.FAILOVER);
    }

    /**
     * {@link FaultSchedule.Kind#KILL_PRIMARY}: the primary node killed; calls {@code whenWritable} and returns once
     * the HA manager promoted the standby and it takes a write; what happened in words. {@link #startAgain()} brings
     * the node back.
     */
    default String killPrimary(Callable<String> whenWritable) throws Exception {
        throw unsupported(FaultSchedule.Kind.KILL_PRIMARY);
    }

    /** {@link FaultSchedule.Kind#PAUSE_REPLAY}: replay on the pods' replica paused ({@code pg_wal_replay_pause()}). */
    default void pauseReplay() throws SQLException {
        throw unsupported(FaultSchedule.Kind.PAUSE_REPLAY);
    }

    /** Ends {@link #pauseReplay()} ({@code pg_wal_replay_resume()}). */
    default void resumeReplay() throws SQLException {
        throw unsupported(FaultSchedule.Kind.PAUSE_REPLAY);
    }

    private UnsupportedOperationException unsupported(FaultSchedule.Kind kind) {
        return new UnsupportedOperationException(getClass().getSimpleName() + " cannot be put through " + kind);
    }
}
