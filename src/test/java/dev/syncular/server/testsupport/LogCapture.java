package dev.syncular.server.testsupport;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.jboss.logmanager.ExtLogRecord;

/**
 * Captures the records of one log category (and below) while open, with the MDC value they were logged under:
 * a test handler on the running app's log manager, read after the request that logged them has answered.
 */
public final class LogCapture extends Handler implements AutoCloseable {
    /** One captured record: its formatted message, the MDC value of {@code mdcKey} and the exception it carried. */
    public record Line(String category, Level level, String message, String mdc, Throwable thrown) {}

    private final Logger logger;
    private final Level previous;
    private final String mdcKey;
    public final List<Line> lines = new CopyOnWriteArrayList<>();

    private LogCapture(String category, Level level, String mdcKey) {
        this.logger = Logger.getLogger(category);
        this.previous = logger.getLevel();
        this.mdcKey = mdcKey;
        logger.setLevel(level);
        logger.addHandler(this);
    }

    /** Captures {@code category} at {@code level} and finer-grained categories below it. */
    public static LogCapture of(String category, Level level, String mdcKey) {
        return new LogCapture(category, level, mdcKey);
    }

    @Override
    public void publish(LogRecord r) {
        String message = r instanceof ExtLogRecord e ? e.getFormattedMessage() : r.getMessage();
        String mdc = r instanceof ExtLogRecord e ? e.getMdc(mdcKey) : null;
        lines.add(new Line(r.getLoggerName(), r.getLevel(), message, mdc, r.getThrown()));
        synchronized (this) {
            notifyAll();
        }
    }

    /**
     * The first captured line matching {@code p}, waiting for it to be logged (signalled by each new record) until
     * {@code timeout}; fails then. For lines logged after the answer that caused them (e.g. the access log's).
     */
    public Line await(Predicate<Line> p, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (this) {
            while (true) {
                for (Line l : lines) {
                    if (p.test(l)) {
                        return l;
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("no matching log line among " + lines.size());
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }
    }

    @Override
    public void flush() {}

    @Override
    public void close() {
        logger.removeHandler(this);
        logger.setLevel(previous);
    }
}
