package dev.syncular.server.config;

import io.quarkus.runtime.configuration.DurationConverter;
import java.time.Duration;
import org.eclipse.microprofile.config.spi.Converter;

/**
 * The value of a scheduled job's interval that may be off ({@code syncular.reactions.poll-interval},
 * {@code syncular.blobs.sweep-interval}), which the Quarkus scheduler also reads as its {@code every}: a duration more than {@code 0s} in the scheduler's own syntax ({@code 1h}, {@code 30m},
 * {@code 2d}, {@code PT1H}, {@code 500ms}), or {@code off}/{@code disabled} (any case), which the scheduler takes as
 * "never run" and this mapping as {@link #OFF}. Anything else stops start-up naming the property.
 */
public final class ScheduleInterval implements Converter<Duration> {
    /** The explicit "off" value: the scheduler never runs the job. */
    public static final Duration OFF = Duration.ZERO;

    @Override
    public Duration convert(String value) {
        String v = value.trim();
        if (v.equalsIgnoreCase("off") || v.equalsIgnoreCase("disabled")) {
            return OFF;
        }
        Duration d = DurationConverter.parseDuration(v);
        if (d == null || d.isZero() || d.isNegative()) {
            throw new IllegalArgumentException("an interval must be more than 0s, or off; was " + value);
        }
        return d;
    }

    /** Whether {@code interval} is {@link #OFF}. */
    public static boolean off(Duration interval) {
        return interval.isZero();
    }
}
