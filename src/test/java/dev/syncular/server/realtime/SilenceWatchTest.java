package dev.syncular.server.realtime;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** §8.5 idle reaping: three silent intervals close a socket, but not a tick that follows the pod's own stall. */
class SilenceWatchTest {
    final AtomicLong now = new AtomicLong(1_000_000);
    final SilenceWatch watch = new SilenceWatch(1_000, now::get);

    SilenceWatch.Tick tickAfter(long ms) {
        now.addAndGet(ms);
        return watch.tick();
    }

    @Test
    void threeSilentIntervalsOnTimeAreIdle() {
        long heard = now.get();
        SilenceWatch.Tick t = watch.tick();
        for (int i = 0; i < 3; i++) {
            t = tickAfter(1_000);
            assertFalse(watch.silent(t, heard), "heard " + (i + 1) + " intervals ago: not idle yet");
        }
        t = tickAfter(1_000);
        assertTrue(t.mayReap());
        assertTrue(watch.silent(t, heard), "four intervals without a frame");
        assertFalse(watch.silent(t, now.get() - 10), "a socket heard just now");
    }

    @Test
    void aLateTickClosesNothingAndTheNextOnTimeTickJudgesAgain() {
        long heard = now.get();
        watch.tick();
        // the pod stalled for five seconds (its timer fires late): its clients' pongs may still wait unread
        SilenceWatch.Tick late = tickAfter(5_000);
        assertFalse(late.mayReap());
        assertFalse(watch.silent(late, heard), "a stall of the pod is not the client's silence");
        // the pong of the late tick's ping was read meanwhile
        long pong = now.get() + 5;
        SilenceWatch.Tick next = tickAfter(1_000);
        assertTrue(next.mayReap());
        assertFalse(watch.silent(next, pong));
        assertTrue(watch.silent(next, heard), "a client silent since before the stall is still reaped");
    }

    @Test
    void aTickUpToHalfAnIntervalLateMayReap() {
        watch.tick();
        assertTrue(tickAfter(1_500).mayReap());
        assertFalse(tickAfter(1_501).mayReap());
    }

    @Test
    void heardTimesAreMonotonic() {
        long a = SilenceWatch.MONOTONIC_MS.getAsLong();
        long b = SilenceWatch.MONOTONIC_MS.getAsLong();
        assertTrue(b >= a, "the monotonic clock never goes back, whatever the wall clock does");
    }
}
