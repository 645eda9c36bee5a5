package dev.syncular.server.storage.postgres;

import dev.syncular.server.storage.PushTx;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;

/**
 * An {@link PushTx#appendCommit} statement not sent yet and the writes issued after it: held by
 * {@link PushTransaction} until the commit's idempotency record can join its statement (§2.3).
 */
final class HeldAppend {
    final Tuple args;
    final int writerVersion;
    final List<Uni<?>> after = new ArrayList<>();

    HeldAppend(Tuple args, int writerVersion) {
        this.args = args;
        this.writerVersion = writerVersion;
    }
}
