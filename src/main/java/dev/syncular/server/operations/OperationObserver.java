package dev.syncular.server.operations;

import java.util.List;
import java.util.Locale;

/**
 * What the remote operations report about each answered operation (for metrics, {@code observability.OperationMetrics}):
 * one call per HTTP request and per watch snapshot or watch error. Tag values are from closed sets: the
 * registered operation id (anything else is {@link #UNREGISTERED}), the binding ({@link Binding}) and the
 * outcome ({@code ok} or a §7 / {@code sync.*} code).
 */
public interface OperationObserver {
    /** The operation tag of an id that names no registered operation (or a message that named none). */
    String UNREGISTERED = "unregistered";
    /** The outcome tag of a success. */
    String OK = "ok";

    /** Which binding answered. */
    enum Binding {
        /** {@code POST <mount>/operations} (REMOTE.md §5). */
        HTTP,
        /** A snapshot or error of a watch on {@code <mount>/operations/realtime} (REMOTE.md §6). */
        WATCH;

        public String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** The observer that records nothing. */
    OperationObserver NONE = (operation, binding, outcome, nanos) -> {};

    /**
     * One operation answered: {@code operation} is a registered id or {@link #UNREGISTERED}, {@code outcome}
     * {@link #OK} or the answered code, {@code nanos} from the message's arrival (or the rerun's start) to the answer.
     */
    void answered(String operation, Binding binding, String outcome, long nanos);

    /**
     * An operation of {@code partition} answered with the error {@code code} (a §7 {@code operation.*} or a
     * {@code sync.*} code): told after {@link #answered}, for the admin event tail.
     */
    default void failed(String operation, Binding binding, String code, String partition) {}

    /** Tells every one of {@code observers}, in order. */
    static OperationObserver of(List<OperationObserver> observers) {
        List<OperationObserver> all = List.copyOf(observers);
        return new OperationObserver() {
            @Override
            public void answered(String operation, Binding binding, String outcome, long nanos) {
                all.forEach(o -> o.answered(operation, binding, outcome, nanos));
            }

            @Override
            public void failed(String operation, Binding binding, String code, String partition) {
                all.forEach(o -> o.failed(operation, binding, code, partition));
            }
        };
    }
}
