package dev.syncular.server.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link ScheduleShrinker}: the fault campaign's shortest failing schedule, on schedules of letters. */
class ScheduleShrinkerTest {
    private static final List<String> SCHEDULE = List.of("a", "b", "c", "d", "e", "f", "g", "h", "i");

    @Test
    void oneFaultThatFailsAloneIsTheAnswer() {
        List<List<String>> tried = new ArrayList<>();
        List<String> shortest = ScheduleShrinker.shrink(
                SCHEDULE,
                s -> {
                    tried.add(s);
                    return s.contains("f");
                },
                () -> true);
        assertEquals(List.of("f"), shortest);
        assertEquals(6, tried.size(), "a to f alone: " + tried);
    }

    @Test
    void faultsThatFailOnlyTogetherAreKeptInTheirOrder() {
        List<String> shortest = ScheduleShrinker.shrink(
                SCHEDULE, s -> s.contains("b") && s.contains("g") && s.indexOf("b") < s.indexOf("g"), () -> true);
        assertEquals(List.of("b", "g"), shortest);
    }

    @Test
    void aSpentBudgetAnswersTheShortestSeenFailing() {
        AtomicInteger replays = new AtomicInteger();
        List<String> shortest = ScheduleShrinker.shrink(
                SCHEDULE,
                s -> {
                    replays.incrementAndGet();
                    return s.contains("c") && s.contains("e");
                },
                () -> replays.get() < SCHEDULE.size() + 3);
        // 9 singles pass, then i, h and g are left out (each still fails), then the budget ends
        assertEquals(List.of("a", "b", "c", "d", "e", "f"), shortest);
        assertEquals(SCHEDULE.size() + 3, replays.get());
    }

    @Test
    void aReplayThatPassesKeepsTheStep() {
        // a flaky failure: only the full schedule was seen failing, every replay passes
        List<String> shortest = ScheduleShrinker.shrink(SCHEDULE, s -> false, () -> true);
        assertEquals(SCHEDULE, shortest);
        assertTrue(ScheduleShrinker.shrink(List.of("x"), s -> false, () -> true).equals(List.of("x")));
    }
}
