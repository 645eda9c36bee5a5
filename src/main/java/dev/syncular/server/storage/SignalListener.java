package dev.syncular.server.storage;

import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * A listening connection to the storage's signal channels ({@link RealtimeSignals}: the commit channel, the control
 * channel, the presence channel), for a realtime hub (§8.2, §8.3, §8.6). It is opened on the database host that
 * accepts writes and reopened, for as long as its owner does not drain, after a lost connection or a failed connect
 * (with a backoff). Nothing blocks: handlers run on the connection's event loop. The PostgreSQL storage implements
 * it with {@code LISTEN} on a connection of its own.
 */
public interface SignalListener {

    /**
     * A channel listened on: its notifications' payloads go to {@code handler}; {@code listened} runs each time its
     * {@code LISTEN} takes effect (the first time and after every reconnect).
     */
    record Channel(String name, Consumer<String> handler, Runnable listened) {}

    /** What a listening connection tells its owner and asks it. */
    interface Owner {
        /** Whether the owner drains: no new connection is opened, no failed one retried. */
        boolean draining();

        /** A connect (or the search for the host that accepts writes) failed; it is retried. */
        void failed(Throwable cause);
    }

    /** The open connection of {@link #listen}. */
    interface Listening {
        /** Closes the current connection (none is reopened once the owner drains). */
        void close();
    }

    /**
     * Opens the connection listening on {@code channels} and returns at once; the first channel's {@code LISTEN}
     * taking effect counts as the connection being up (a failed connect before that backs off longer).
     */
    Listening listen(List<Channel> channels, Owner owner);

    /** The owner of a listening connection that drains when {@code draining} says so, telling failures to {@code failed}. */
    static Owner owner(BooleanSupplier draining, Consumer<Throwable> failed) {
        return new Owner() {
            @Override
            public boolean draining() {
                return draining.getAsBoolean();
            }

            @Override
            public void failed(Throwable cause) {
                failed.accept(cause);
            }
        };
    }
}
