package dev.syncular.server.testsupport;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * The shortest fault schedule found that still fails (issue 44: "a failure prints the seed and the shortest schedule
 * that reproduces it"): given the steps of a failed campaign, each one alone is tried first (most failures need one
 * fault), then, from the last step to the first, each step is left out for good when the campaign still fails without
 * it. Every answer is a schedule that was seen failing (the full one counts as seen); a replay that happens to pass is
 * taken as passing, so under a flaky failure the answer may be longer than the shortest, never one that never failed.
 * {@code withinBudget} is asked before each replay: when it answers false the shortest so far is returned.
 */
public final class ScheduleShrinker {
    private ScheduleShrinker() {}

    public static <T> List<T> shrink(List<T> failed, Predicate<List<T>> fails, BooleanSupplier withinBudget) {
        List<T> current = List.copyOf(failed);
        if (current.size() <= 1) {
            return current;
        }
        for (T step : current) {
            if (!withinBudget.getAsBoolean()) {
                return current;
            }
            if (fails.test(List.of(step))) {
                return List.of(step);
            }
        }
        for (int i = current.size() - 1; i >= 0 && current.size() > 1; i--) {
            if (!withinBudget.getAsBoolean()) {
                return current;
            }
            List<T> without = new ArrayList<>(current);
            without.remove(i);
            if (fails.test(List.copyOf(without))) {
                current = List.copyOf(without);
            }
        }
        return current;
    }
}
