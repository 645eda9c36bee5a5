package dev.syncular.server.crdt.yjs;

import java.util.Collections;
import java.util.Comparator;
import java.util.List;

/**
 * {@code Array.prototype.sort} as V8 runs it on short arrays (fewer than 64 elements): the ascending or
 * strictly descending run at the start (a descending one reversed), then binary insertion of the rest, with
 * exactly V8's comparisons. This matters for a comparator that is not consistent — {@code Y.mergeUpdates}'s
 * is not, for an item and a collected run at the same id — because the outcome then follows the comparisons
 * made. Longer lists are sorted stably ({@link List#sort}), which equals V8 for consistent comparators.
 */
final class JsArraySort {
    private static final int SHORT = 64;

    private JsArraySort() {}

    static <T> void sort(List<T> list, Comparator<? super T> cmp) {
        int n = list.size();
        if (n < 2) {
            return;
        }
        if (n >= SHORT) {
            list.sort(cmp);
            return;
        }
        int run = 2;
        boolean descending = cmp.compare(list.get(1), list.get(0)) < 0;
        for (int i = 2; i < n; i++) {
            int order = cmp.compare(list.get(i), list.get(i - 1));
            if (descending ? order >= 0 : order < 0) {
                break;
            }
            run++;
        }
        if (descending) {
            Collections.reverse(list.subList(0, run));
        }
        for (int start = run; start < n; start++) {
            T pivot = list.get(start);
            int left = 0;
            int right = start;
            while (left < right) {
                int mid = left + ((right - left) >> 1);
                if (cmp.compare(pivot, list.get(mid)) < 0) {
                    right = mid;
                } else {
                    left = mid + 1;
                }
            }
            for (int p = start; p > left; p--) {
                list.set(p, list.get(p - 1));
            }
            list.set(left, pivot);
        }
    }
}
