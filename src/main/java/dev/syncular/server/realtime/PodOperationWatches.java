package dev.syncular.server.realtime;

import dev.syncular.server.operations.QueryWatches;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

/**
 * The pod's §6 watches on its commit signal: the realtime hub's {@code LISTEN} connection already hears every
 * commit of every pod ({@code <partition>:<commitSeq>} on the storage's commit channel), so the watches listen
 * there too ({@link RealtimeHub.CommitListener}) — a commit taken on another pod reruns a watch here — and a
 * re-{@code LISTEN} or an epoch rotation gives every affected watch a fresh snapshot. Gauges:
 * {@code syncular.operations.watches} (active watches of the pod), {@code syncular.operations.watch.backlog}
 * (runs waiting for a run slot).
 */
@Startup
@ApplicationScoped
public class PodOperationWatches {
    @Inject
    public PodOperationWatches(PodRealtime realtime, QueryWatches watches, MeterRegistry registry) {
        realtime.hub().addCommitListener(new RealtimeHub.CommitListener() {
            @Override
            public void committed(String partition, long seq) {
                watches.committed(partition, seq);
            }

            @Override
            public void partitionReset(String partition) {
                watches.partitionReset(partition);
            }

            @Override
            public void notificationsLost() {
                watches.notificationsLost();
            }
        });
        Gauge.builder("syncular.operations.watches", watches, QueryWatches::activeWatches)
                .description("Active remote query watches of this pod (REMOTE.md §6)").register(registry);
        Gauge.builder("syncular.operations.watch.backlog", watches, QueryWatches::runBacklog)
                .description("Watch runs waiting for one of this pod's run slots").register(registry);
    }
}
